import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdentityBackend } from '../../src/domain/identity-backend.js';
import type { Principal } from '../../src/domain/identity.js';
import { KeystoneRefusedError } from '../../src/keystone/keystone-client.js';
import { chromiumAvailable, launchChromium } from '../support/browser.js';
import { startApp, type TestApp } from '../support/test-app.js';

const avail = chromiumAvailable();

/**
 * The web UI's sign-in under LEASEHOLD_IDENTITY=keystone in Chromium, against the real API (in-process app on a
 * socket, serving the built UI) with Keystone replaced by a table (as in test/api/keystone-principals.test.ts):
 * a password, its refusal, the project switcher, at phone width and from the keyboard alone. The end-to-end run
 * against a real Keystone is the keystone project's.
 */
const LESSEE = { id: 'f9e8d7c6b5a4039281706f5e4d3c2b1a', name: 'lessee-x' };
const OWNER = { id: '0a1b2c3d4e5f60718293a4b5c6d7e8f9', name: 'owner-a' };
const PASSWORD = 'right horse battery';

const principal = (project: { id: string; name: string }): Principal => ({
  userId: '22222222222222222222222222222222',
  userName: 'x-member',
  role: 'member',
  projectId: project.id,
  projectName: project.name,
  tokenId: `keystone:${project.name}`,
  source: 'keystone',
});
const TOKENS: Record<string, Principal> = { 'ks-lessee': principal(LESSEE), 'ks-owner': principal(OWNER) };

describe.skipIf(!avail.ok)('signing in with Keystone credentials in the browser', () => {
  let t: TestApp;
  let browser: Browser;

  beforeAll(async () => {
    const app = startApp({
      listen: true,
      // The owner project owns a node (Ironic's owner holds its Keystone id): its users get the owner pages.
      nodes: [{ uuid: '4e0d3c2b-1a00-4000-8000-00000000000a', name: 'node-a1', owner: OWNER.id, properties: { memory_mb: 65536, cpus: 16, local_gb: 480, cpu_arch: 'x86_64' } }],
      keystone: {
        url: 'http://keystone.test/v3',
        async issueWith(body, who) {
          const auth = (body as { auth: { identity: { password?: { user: { password: string } }; token?: unknown }; scope?: { project: { id?: string } } } }).auth;
          if (auth.identity.password && auth.identity.password.user.password !== PASSWORD) throw new KeystoneRefusedError(`refused ${who}`);
          const token = auth.identity.token && auth.scope?.project.id === OWNER.id ? 'ks-owner' : 'ks-lessee';
          return { token, info: { expiresAt: new Date('2030-01-01T01:00:00Z') } };
        },
        async revokeToken() {},
        async userProjects() {
          return [LESSEE, OWNER].map((p) => ({ ...p, domainId: 'default' }));
        },
      },
      identity: ({ store, clock }): IdentityBackend => ({
        kind: 'keystone',
        async authenticate(token) {
          const p = TOKENS[token];
          if (!p) return null;
          await store.ensureProject(p.projectId!, p.projectName!, clock.now());
          return p;
        },
        async ping() {},
      }),
    });
    [t, browser] = await Promise.all([app, launchChromium()]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('at 390 × 844, keyboard only: a refused password keeps the user name, the right one signs in, and it all fits', async () => {
    const context = await browser.newContext({ baseURL: t.url!, viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto('/');
      await page.getByLabel('User name', { exact: true }).waitFor();
      expect(await focusedLabel(page)).toBe('User name');
      await page.keyboard.type('x-member');
      await page.keyboard.press('Tab');
      expect(await focusedLabel(page)).toBe('Password');
      await page.keyboard.type('wrong');
      await page.keyboard.press('Enter');
      await page.getByText('Keystone refused the credentials of x-member', { exact: true }).waitFor();
      expect(await focusedLabel(page)).toBe('Password');
      expect(await page.getByLabel('User name', { exact: true }).inputValue()).toBe('x-member');
      expect(await page.getByLabel('Password', { exact: true }).inputValue()).toBe('');
      expect(await horizontalOverflow(page)).toBe(0);

      await page.keyboard.type(PASSWORD);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Nodes', exact: true }).waitFor();
      expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('leasehold.token'))).toBe('ks-lessee');
      const stored = await page.evaluate(() => JSON.stringify({ ...(globalThis as any).sessionStorage, ...(globalThis as any).localStorage }));
      expect(stored).not.toContain(PASSWORD);
      expect(stored).not.toContain('wrong');
      // The switcher, the expiry and sign-out are on the phone's screen, nothing wider than it.
      for (const control of [page.getByLabel('Project', { exact: true }), page.getByRole('button', { name: 'Sign out' }), page.getByText(/^Signed in until /)]) {
        await control.scrollIntoViewIfNeeded();
        const box = await control.boundingBox();
        expect(box).not.toBeNull();
        expect(box!.x).toBeGreaterThanOrEqual(0);
        expect(box!.x + box!.width).toBeLessThanOrEqual(390.5);
      }
      expect(await horizontalOverflow(page)).toBe(0);
      if (process.env.LEASEHOLD_SCREENSHOTS) await page.screenshot({ path: `${process.env.LEASEHOLD_SCREENSHOTS}/keystone-phone.png`, fullPage: true });
    } finally {
      await context.close();
    }
  });

  it('switches project from the navigation with the keyboard, and the page shows the other project', async () => {
    const context = await browser.newContext({ baseURL: t.url!, viewport: { width: 1280, height: 800 } });
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto('/');
      await page.getByLabel('User name', { exact: true }).fill('x-member');
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByLabel('Project', { exact: true }).fill('lessee-x');
      if (process.env.LEASEHOLD_SCREENSHOTS) await page.screenshot({ path: `${process.env.LEASEHOLD_SCREENSHOTS}/keystone-sign-in.png` });
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('x-member · lessee-x (member)').waitFor();
      // Owned nodes: the owner project has node pages, the lessee project none.
      const nav = page.getByRole('navigation', { name: 'Main' });
      expect(await nav.getByRole('link', { name: 'Offers' }).count()).toBe(0);

      const select = page.getByLabel('Project', { exact: true });
      await select.focus();
      await select.selectOption(OWNER.id);
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => (globalThis as any).document.activeElement?.textContent)).toBe('Switch');
      await page.keyboard.press('Enter');
      await page.getByText('x-member · owner-a (member)').waitFor();
      expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem('leasehold.token'))).toBe('ks-owner');
      await nav.getByRole('link', { name: 'Offers' }).waitFor();
      // The user's corner is wider under Keystone: it wraps below rather than squeezing links out of the bar.
      for (const link of await nav.getByRole('link').all()) {
        const box = await link.boundingBox();
        expect(box, `${await link.textContent()} is not drawn`).not.toBeNull();
        expect(box!.x + box!.width, `${await link.textContent()} is cut off`).toBeLessThanOrEqual(1280);
      }
      expect(await nav.evaluate((el) => el.scrollWidth - el.clientWidth)).toBe(0);
      if (process.env.LEASEHOLD_SCREENSHOTS) await page.screenshot({ path: `${process.env.LEASEHOLD_SCREENSHOTS}/keystone-switched.png` });
    } finally {
      await context.close();
    }
  });
});

/** The label of the focused control. */
async function focusedLabel(page: Page): Promise<string | null> {
  return page.evaluate(() => {
    const el = (globalThis as any).document.activeElement;
    return el?.labels?.[0]?.textContent ?? null;
  });
}

async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const doc = (globalThis as any).document;
    return Math.max(0, doc.documentElement.scrollWidth - doc.documentElement.clientWidth);
  });
}
