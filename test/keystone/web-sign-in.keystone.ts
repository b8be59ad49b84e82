/**
 * The web UI's sign-in against a real Keystone (issue 13), in Debian's Chromium: Leasehold in front of a real
 * Ironic with LEASEHOLD_IDENTITY=keystone serves the built UI; a person signs in with an application credential
 * and with a password, sees what its project owns or leases, switches to its other project, and signs out — after
 * which the token the UI obtained is worth nothing, in Keystone or here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { chromiumAvailable, launchChromium } from '../support/browser.js';
import { callJson, overHttp, until } from '../support/http.js';
import { ironicAvailable } from '../support/ironic.js';
import { nodeSpec } from '../support/ironic-leasehold.js';
import { keystoneAvailable } from '../support/keystone.js';
import { startKeystoneCloud, type CloudUser, type KeystoneCloud } from '../support/keystone-leasehold.js';

const avail = keystoneAvailable().ok && ironicAvailable().ok && chromiumAvailable().ok;

describe.skipIf(!avail)('the web UI signs in with Keystone credentials (real Keystone, real Chromium)', () => {
  let cloud: KeystoneCloud;
  let browser: Browser;
  let ada: CloudUser;

  beforeAll(async () => {
    [cloud, browser] = await Promise.all([
      startKeystoneCloud({
        nodes: [
          nodeSpec('web-1', { memory_gib: 64, cpus: 16, local_gb: 480 }, { owner: 'physics-lab' }),
          nodeSpec('web-2', { memory_gib: 64, cpus: 16, local_gb: 480 }, { owner: 'physics-lab' }),
        ],
      }),
      launchChromium(),
    ]);
    const pat = await cloud.user('pat', 'physics-lab', 'member');
    ada = await cloud.user('ada', 'astro', 'member');
    // ada is also a reader of the owner's project: a second project to switch to.
    await cloud.keystone.assignProjectRole(ada.user.id, (await cloud.project('physics-lab')).id, 'reader');
    await pat.api.ok('POST', '/v1/offers', { node_id: 'web-1', max_lease_duration: '1d' });
    await ada.api.ok('POST', '/v1/leases', { nodes: ['web-1'], duration: '1h' });
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await cloud?.stop();
  });

  const openPage = async (): Promise<Page> => {
    const context = await browser.newContext({ baseURL: cloud.leasehold.url, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto('/');
    return page;
  };
  const storedToken = (page: Page) => page.evaluate<string | null>("sessionStorage.getItem('leasehold.token')");
  const meWith = (token: string) => callJson(overHttp(() => cloud.leasehold.url), 'GET', '/v1/me', { headers: { 'X-Auth-Token': token } });

  it('an application credential signs in; the lessee sees its leased node; signing out revokes the token', async () => {
    const ac = await cloud.keystone.createApplicationCredential(ada.user, ada.project!.id, { name: 'ada-browser' });
    const page = await openPage();
    try {
      await page.getByRole('tab', { name: 'Application credential' }).click();
      await page.getByLabel('Application credential ID').fill(ac.id);
      await page.getByLabel('Secret').fill('not-the-secret');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText(/Keystone refused the credentials of application credential/).waitFor();

      await page.getByLabel('Secret').fill(ac.secret);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      await page.getByText(/ada · astro \(member\)/).waitFor();
      await page.goto('/nodes');
      const table = page.getByRole('region', { name: 'Nodes', exact: true });
      await table.getByRole('row', { name: /web-1/ }).waitFor();
      expect(await table.getByRole('row').count()).toBe(2); // the header and web-1: leased, not web-2

      const token = (await storedToken(page))!;
      expect(token.length).toBeGreaterThan(100);
      expect(await page.evaluate<string>('JSON.stringify({ ...sessionStorage, ...localStorage })')).not.toContain(ac.secret);
      expect((await meWith(token)).status).toBe(200);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in to Leasehold' }).waitFor();
      await until(async () => (await cloud.keystone.validateToken(token)).status === 404, 10_000, 'the token revoked in Keystone');
      expect((await meWith(token)).status).toBe(401);
    } finally {
      await page.context().close();
    }
  });

  it("a password signs in; a person in two projects switches to the other from the bar and sees that project's nodes", async () => {
    const page = await openPage();
    try {
      await page.getByLabel('User name', { exact: true }).fill('ada');
      await page.getByLabel('Password', { exact: true }).fill(ada.user.password);
      await page.getByLabel('Project', { exact: true }).fill('astro');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText(/ada · astro \(member\)/).waitFor();
      const first = (await storedToken(page))!;

      const physics = await cloud.project('physics-lab');
      await page.getByLabel('Project', { exact: true }).selectOption(physics.id);
      await page.getByRole('button', { name: 'Switch' }).click();
      await page.getByText(/ada · physics-lab \(reader\)/).waitFor();
      await page.goto('/nodes');
      const table = page.getByRole('region', { name: 'Nodes', exact: true });
      await table.getByRole('row', { name: /web-2/ }).waitFor();
      expect(await table.getByRole('row').count()).toBe(3); // the header and both of physics-lab's nodes
      const switched = (await storedToken(page))!;
      expect(switched).not.toBe(first);
      expect((await meWith(switched)).body.project).toEqual({ id: physics.id, name: 'physics-lab' });
      // The astro token the UI obtained first was revoked by the switch.
      await until(async () => (await cloud.keystone.validateToken(first)).status === 404, 10_000, 'the first token revoked');
    } finally {
      await page.context().close();
    }
  });
});
