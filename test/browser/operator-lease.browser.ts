import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium, signIn } from '../support/browser.js';
import { ADMIN_TOKEN, createProjectUser, startApp, type TestApp } from '../support/test-app.js';

const avail = chromiumAvailable();

/**
 * The operator requesting a lease for a project in Chromium, against the real API (the in-process app on a socket,
 * serving the built UI; the browser's clock at the server's instant): "Request a lease" is in its navigation, the
 * address /leases/new is the form (never a lease called "new"), the project picker lists the projects with none
 * chosen, and the lease it requests is the chosen project's, the operator named in the audit log.
 */
const T0 = Date.parse('2030-01-01T00:00:00Z');
const node = (n: number, name: string, gpus: number) => ({
  uuid: `0f5e0000-0000-4000-8000-00000000000${n}`,
  name,
  owner: 'optics',
  properties: { memory_mb: 65536, cpus: 16, local_gb: 480, cpu_arch: 'x86_64', gpus },
});

describe.skipIf(!avail.ok)('the operator requests a lease for a project in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let solar: { projectId: string };
  const pageErrors: string[] = [];

  beforeAll(async () => {
    [t, browser] = await Promise.all([startApp({ listen: true, nodes: [node(1, 'opt-gpu-1', 1), node(2, 'opt-cpu-1', 0)] }), launchChromium()]);
    const owner = await createProjectUser(t, 'optics', 'member');
    solar = await createProjectUser(t, 'solar', 'member');
    await createProjectUser(t, 'geo', 'member');
    for (const n of ['opt-gpu-1', 'opt-cpu-1']) expect((await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: n } })).status).toBe(201);
    context = await browser.newContext({ baseURL: t.url!, viewport: { width: 1280, height: 900 } });
    await context.clock.setFixedTime(new Date(T0));
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    await signIn(page, ADMIN_TOKEN);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('opens the form at /leases/new with a project picker, none chosen, and no quote until a project is', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Request a lease', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Request a lease' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/leases/new');
    const picker = page.getByLabel('Lease for project');
    await expect.poll(() => picker.locator('option').allTextContents()).toEqual(['Choose a project…', 'geo', 'optics', 'solar']);
    expect(await picker.inputValue()).toBe('');
    await page.getByText('Choose the project the lease is for.').waitFor();

    // Typed in the address bar: the same form, not a lease called "new".
    await page.goto('/leases/new');
    await page.getByRole('heading', { level: 1, name: 'Request a lease' }).waitFor();
    expect(await page.getByText('Could not load the lease').count()).toBe(0);
  });

  it("quotes and books for the chosen project; the lease is that project's and the audit log names the operator", async () => {
    await page.getByLabel('Lease for project').selectOption({ label: 'solar' });
    await page.getByLabel('Group 1 Requirement expression').fill('gpus >= 1');
    const picked = page.getByRole('list', { name: 'Nodes that would be picked' });
    await expect.poll(() => picked.textContent()).toBe('Group 1: opt-gpu-1');
    await page.getByRole('button', { name: 'Request lease' }).click();
    await page.waitForURL(/\/leases\/[0-9a-f-]{36}$/);
    const id = new URL(page.url()).pathname.split('/')[2]!;
    const lease = await t.request('GET', `/v1/leases/${id}`);
    expect(lease.body).toMatchObject({ project_id: solar.projectId, project_name: 'solar' });
    const events = await t.request('GET', `/v1/events?lease_id=${id}&type=lease.created`);
    expect(events.body.events).toEqual([expect.objectContaining({ actor: 'admin', project_id: solar.projectId })]);
    await page.getByText('solar', { exact: true }).first().waitFor();
  });

  it('had no uncaught errors in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
