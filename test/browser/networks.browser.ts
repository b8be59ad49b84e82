import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium, signIn, startBrowserServer, type BrowserServer } from '../support/browser.js';

const avail = chromiumAvailable();
const ADMIN = 'lh_browser-networks-admin-0123456789abcdef';

/**
 * Tenant networks in Chromium against the real `leasehold serve` with the demo's simulated networks (each project
 * gets `private` and `data` VLAN networks, beside a shared flat `public`): a lessee attaches a network to its leased
 * node from the lease page, sees the NIC carry it with its VLAN, detaches it after confirming; the node page shows
 * the same NICs.
 */
describe.skipIf(!avail.ok)('tenant networks in the browser', () => {
  let lh: BrowserServer;
  let browser: Browser;
  let page: Page;
  let leaseId = '';
  const pageErrors: string[] = [];

  beforeAll(async () => {
    [lh, browser] = await Promise.all([startBrowserServer(ADMIN), launchChromium()]);
    const lease = await lh.as('ada')('POST', '/v1/leases', { name: 'net-ui', nodes: ['gpu-1'], duration: 'PT1H' });
    leaseId = lease.body.id;
    const context = await browser.newContext({ baseURL: lh.url, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    await signIn(page, lh.tokens.ada);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await lh?.stop();
  });

  it('the lessee attaches its network to the leased node from the lease page and sees the NIC carry it with its VLAN', async () => {
    await page.goto(`/leases/${leaseId}`);
    const section = page.getByRole('region', { name: 'Networks of gpu-1' });
    await section.getByRole('region', { name: 'NICs' }).waitFor();
    const picker = section.getByLabel('Network', { exact: true });
    await expect.poll(async () => (await picker.locator('option').allTextContents()).join('|')).toMatch(/private — VLAN \d+.*public — flat \(shared\)/);
    await picker.selectOption({ label: (await picker.locator('option', { hasText: 'private' }).textContent())! });
    await section.getByRole('button', { name: 'Attach' }).click();
    await expect.poll(() => section.getByRole('status').textContent()).toMatch(/^private attached to gpu-1 on [0-9a-f:]{17}\.$/);
    const row = section.getByRole('region', { name: 'NICs' }).getByRole('row', { name: /private/ });
    await expect.poll(() => row.textContent()).toMatch(/private\d{3}/);
    const api = await lh.as('ada')('GET', '/v1/nodes/gpu-1/networks');
    expect(api.body.nics.filter((n: { in_use: boolean }) => n.in_use)).toHaveLength(1);
  });

  it('the node page shows the same NICs; detaching asks first and frees the NIC', async () => {
    await page.goto('/nodes');
    await page.getByRole('link', { name: 'gpu-1' }).click();
    await page.getByRole('heading', { name: 'gpu-1', level: 1 }).waitFor();
    const section = page.getByRole('region', { name: 'Networks of gpu-1' });
    const row = section.getByRole('region', { name: 'NICs' }).getByRole('row', { name: /private/ });
    await row.getByRole('button', { name: 'Detach' }).click();
    const confirm = row.getByRole('group', { name: /Detach private from .*\? Its port will be deleted\./ });
    await confirm.getByRole('button', { name: 'Detach' }).click();
    await expect.poll(() => section.getByRole('status').textContent()).toBe('private detached from gpu-1.');
    await expect.poll(async () => (await lh.as('ada')('GET', '/v1/nodes/gpu-1/networks')).body.nics.every((n: { in_use: boolean }) => !n.in_use)).toBe(true);
  });

  it('had no uncaught errors in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
