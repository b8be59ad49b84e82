import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium, signIn, startBrowserServer, type BrowserServer } from '../support/browser.js';

const avail = chromiumAvailable();
const ADMIN = 'lh_browser-csp-admin-token-0123456789abcdef';

/** What the page reported as blocked by its Content Security Policy (collected from the first script on). */
async function violations(page: Page): Promise<string[]> {
  return page.evaluate(() => ((globalThis as { __csp?: string[] }).__csp ?? []));
}

/**
 * The web UI and the API reference under the policies the server sends (src/api/web-ui.ts, src/api/docs-page.ts):
 * the pages work, xterm.js included, and the browser reports nothing it had to block.
 */
describe.skipIf(!avail.ok)('the pages under their Content Security Policy', () => {
  let lh: BrowserServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const blocked: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    [lh, browser] = await Promise.all([startBrowserServer(ADMIN), launchChromium()]);
    context = await browser.newContext({ baseURL: lh.url, viewport: { width: 1280, height: 900 } });
    // Registered by the browser before any script of the page, and not subject to the page's policy.
    await context.addInitScript(() => {
      const g = globalThis as any;
      g.document.addEventListener('securitypolicyviolation', (e: any) => {
        (g.__csp ??= []).push(`${e.effectiveDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`);
      });
    });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) blocked.push(msg.text());
    });
    page.on('pageerror', (err) => pageErrors.push(String(err)));
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await lh?.stop();
  });

  it('the UI signs in, lists nodes and shows a working serial console with nothing blocked', async () => {
    const ada = lh.as('ada');
    const lease = (await ada('POST', '/v1/leases', { name: 'csp', nodes: ['gpu-1'], duration: 'PT10M' })).body;
    await expect.poll(async () => (await ada('GET', `/v1/leases/${lease.id}`)).body.state).toBe('active');

    const root = await page.request.get('/');
    expect(root.headers()['content-security-policy']).toContain("script-src 'self'");
    await signIn(page, lh.tokens.ada);
    await page.getByRole('region', { name: 'Nodes', exact: true }).getByRole('row', { name: /gpu-1/ }).waitFor();

    await page.goto(`/leases/${lease.id}`);
    await page.getByRole('heading', { level: 1, name: 'csp active' }).waitFor();
    const row = page.getByRole('region', { name: 'Allocations' }).getByRole('row', { name: /^gpu-1\b/ });
    await row.getByRole('button', { name: 'Open console' }).click();
    const terminal = page.getByLabel('Terminal of gpu-1');
    await expect
      .poll(async () => (await terminal.locator('.xterm-rows > div').allTextContents()).join('\n').replace(/\u00a0/g, ' '))
      .toContain('Leasehold simulated serial console: gpu-1');
    // xterm.js lays out and colours its cells with <style> elements it adds: each must have been applied.
    const styles = await page.evaluate(() =>
      [...(globalThis as any).document.querySelectorAll('.xterm style')].map((s: any) => s.sheet !== null),
    );
    expect(styles.length).toBeGreaterThan(0);
    expect(styles.every(Boolean)).toBe(true);

    expect(await violations(page)).toEqual([]);
    expect(blocked).toEqual([]);
  });

  it('the API reference renders its operations with nothing blocked', async () => {
    await page.goto('/docs');
    await page.locator('.swagger-ui .info .title').filter({ hasText: 'Leasehold API' }).waitFor();
    await page.locator('.opblock').first().waitFor();
    expect(await page.locator('.opblock').count()).toBeGreaterThan(10);
    expect(await violations(page)).toEqual([]);
    expect(blocked).toEqual([]);
  });

  it('had no uncaught errors in the pages', () => {
    expect(pageErrors).toEqual([]);
  });
});
