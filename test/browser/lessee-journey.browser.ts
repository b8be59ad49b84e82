import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium, startBrowserServer, type BrowserServer, type RestCall } from '../support/browser.js';

const avail = chromiumAvailable();
const ADMIN = 'lh_browser-admin-token-0123456789abcdef';
/** Long enough for every step before the end on a busy 2-core machine (they take ≈ 6 s); then the suite waits. */
const LEASE_SECONDS = 30;

/**
 * A lessee's whole story in Chromium against the real `leasehold serve` (the built server and UI, the simulated
 * driver with fast timings): sign in, the nodes and the requirement expression box, the availability timeline
 * (rows, another project's lease as busy, a free slot starting a request), the request form with its live quote,
 * a lease that becomes active, power, the serial console with the node's output and echo, and access ending with
 * the lease. The steps share one page and run in order.
 */
describe.skipIf(!avail.ok)('a lessee in the browser', () => {
  let lh: BrowserServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let ada: RestCall;
  const pageErrors: string[] = [];
  let lease: { id: string; name: string; start: string; end: string };

  beforeAll(async () => {
    [lh, browser] = await Promise.all([startBrowserServer(ADMIN), launchChromium()]);
    ada = lh.as('ada');
    // Another project's lease on a node Alice could lease: busy time on her timeline, and why two GPUs are not free.
    await lh.as('bo')('POST', '/v1/leases', { name: 'bio-run', nodes: ['gpu-2'], duration: 'PT1H' });
    context = await browser.newContext({ baseURL: lh.url, viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (err) => pageErrors.push(String(err)));
  }, 120_000);

  // One story: once a step fails, the later ones are skipped rather than failing for the same reason.
  let broken = false;
  beforeEach((ctx) => {
    if (broken && !ctx.task.name.startsWith('had no uncaught')) ctx.skip();
  });
  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') broken = true;
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await lh?.stop();
  });

  it('refuses a wrong token and signs in with the "Token" field', async () => {
    await page.goto('/');
    await page.getByLabel('Token', { exact: true }).fill('lh_not-a-real-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('That token was not accepted');

    await page.getByLabel('Token', { exact: true }).fill(lh.tokens.ada);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Nodes', exact: true }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Main' });
    expect(await nav.getByRole('link').allTextContents()).toEqual(expect.arrayContaining(['Nodes', 'Leases']));
    expect(await page.getByText('ada · astro (member)').isVisible()).toBe(true);
    expect(new URL(page.url()).pathname).toBe('/nodes');
  });

  it('shows the nodes table, searches it, and filters with a requirement expression', async () => {
    const table = page.getByRole('region', { name: 'Nodes', exact: true });
    await table.getByRole('row', { name: /astro-01/ }).waitFor();
    // Alice's project owns astro-01 and leases nothing yet: that is all she sees.
    expect(await table.getByRole('row').count()).toBe(2); // the header and astro-01
    const row = table.getByRole('row', { name: /astro-01/ });
    expect(await row.textContent()).toMatch(/8 GiB.*astro.*available.*power off/);

    await page.getByRole('searchbox', { name: 'Search' }).fill('no-such-node');
    await page.getByText('No node matches.').waitFor();
    await page.getByRole('searchbox', { name: 'Search' }).fill('astro');
    await table.getByRole('row', { name: /astro-01/ }).waitFor();
    await page.getByRole('searchbox', { name: 'Search' }).fill('');

    // The expression is the API's: the other projects' offered GPU nodes match.
    await page.getByRole('textbox', { name: 'Requirement expression' }).fill('gpus >= 1 and memory >= 48GiB');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Also offered to you and matching:').waitFor();
    expect(await page.getByText('Also offered to you and matching:').textContent()).toContain('gpu-1, gpu-2');

    // A malformed expression: the API's own message, verbatim, as an alert on the field.
    const bad = 'gpus >= and memory';
    const apiAnswer = await ada('GET', `/v1/offers?where=${encodeURIComponent(bad)}`, undefined, [400]);
    expect(apiAnswer.status).toBe(400);
    await page.getByRole('textbox', { name: 'Requirement expression' }).fill(bad);
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe(apiAnswer.body.error.message);
    expect(await page.getByRole('textbox', { name: 'Requirement expression' }).getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => page.getByRole('alert').count()).toBe(0);
  });

  it('sees the timeline: a row per node, another project\'s lease as "busy", free slots; a free slot starts a request', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Timeline', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Availability timeline' }).waitFor();
    const grid = page.getByRole('table', { name: /^Availability/ });
    // Alice sees her own node and the four offered to every project.
    await grid.getByRole('rowheader', { name: 'gpu-1' }).waitFor();
    const names = (await grid.getByRole('rowheader').allTextContents()).map((n) => n.trim()).sort();
    expect(names).toEqual(['astro-01', 'cpu-1', 'gpu-1', 'gpu-2', 'store-1']);
    // Bo's lease on gpu-2 is another project's: a bar that says "busy" and not whose or what.
    const busy = grid.getByRole('row', { name: /gpu-2/ }).getByRole('button', { name: /^gpu-2 busy / });
    await busy.waitFor();
    expect(await grid.getByText('bio-run').count()).toBe(0);
    // Zoom: the day shows the same rows.
    await page.getByRole('group', { name: 'Zoom' }).getByRole('button', { name: 'Day', exact: true }).click();
    expect(await page.getByRole('group', { name: 'Zoom' }).getByRole('button', { name: 'Day', exact: true }).getAttribute('aria-pressed')).toBe('true');
    await grid.getByRole('row', { name: /gpu-2/ }).getByRole('button', { name: /^gpu-2 busy / }).waitFor();

    // A free slot is a button: from the keyboard it starts a request on that node from the slot's beginning (now).
    const free = grid.getByRole('row', { name: /gpu-1/ }).getByRole('button', { name: /^gpu-1 free from / }).first();
    await free.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Request a lease' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/leases/new');
    expect(await page.getByRole('textbox', { name: 'Named nodes' }).inputValue()).toBe('gpu-1');
    expect(await page.getByRole('radio', { name: 'Now' }).isChecked()).toBe(true);
  });

  it('requests a lease through the form, the live quote picking nodes as the request is typed', async () => {
    const quote = page.getByRole('complementary', { name: 'Quote' });
    // The named node from the timeline is quoted at once.
    await expect.poll(() => quote.getByRole('list', { name: 'Nodes that would be picked' }).textContent()).toContain('gpu-1');

    // A requirement instead: two GPU nodes are not free now (Bo has gpu-2): why not, and the earliest start.
    await page.getByRole('textbox', { name: 'Named nodes' }).fill('');
    await page.getByRole('button', { name: 'Add a group' }).click();
    await page.getByLabel('Group 1 Count').fill('2');
    await page.getByRole('textbox', { name: 'Group 1 Requirement expression' }).fill('gpus >= 1');
    await page.getByRole('textbox', { name: 'Duration' }).fill(`${LEASE_SECONDS}s`);
    await quote.getByText('Not possible as asked:').waitFor();
    await quote.getByText(/^Earliest start:/).waitFor();

    // One is: the quote names the node best fit would pick (gpu-1, the smaller one).
    await page.getByLabel('Group 1 Count').fill('1');
    await expect.poll(() => quote.textContent()).toContain('Available: 1 node would be leased.');
    expect(await quote.getByRole('list', { name: 'Nodes that would be picked' }).textContent()).toBe('Group 1: gpu-1');

    await page.getByRole('textbox', { name: 'Name (optional)' }).fill('ui-journey');
    await page.getByRole('button', { name: 'Request lease' }).click();
    await expect.poll(() => new URL(page.url()).pathname).toMatch(/^\/leases\/[0-9a-f-]{36}$/);
    const id = new URL(page.url()).pathname.split('/').pop()!;
    lease = (await ada('GET', `/v1/leases/${id}`)).body;
    expect(lease).toMatchObject({ name: 'ui-journey', request: { groups: [{ count: 1, where: 'gpus >= 1' }] } });
    expect(Date.parse(lease.end) - Date.parse(lease.start)).toBe(LEASE_SECONDS * 1000);
  });

  it('sees the lease become active, in the leases list and as a named bar on the timeline', async () => {
    await page.getByRole('heading', { level: 1, name: 'ui-journey active' }).waitFor();
    await page.getByText(/^Ends in /).waitFor();
    await expect.poll(() => allocationRow('gpu-1').getByRole('cell').nth(1).textContent()).toBe('active');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Leases', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Leases', exact: true }).waitFor();
    await page.getByRole('region', { name: 'Leases' }).getByRole('link', { name: 'ui-journey' }).waitFor();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Timeline', exact: true }).click();
    const grid = page.getByRole('table', { name: /^Availability/ });
    // Her own lease is named, and links to it.
    const bar = grid.getByRole('row', { name: /gpu-1/ }).getByRole('link', { name: /^gpu-1 ui-journey / });
    await bar.click();
    await expect.poll(() => new URL(page.url()).pathname).toBe(`/leases/${lease.id}`);
    await page.getByRole('heading', { level: 1, name: 'ui-journey active' }).waitFor();
  });

  it('lists the leased node on the nodes page with the lease', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Nodes', exact: true }).click();
    const table = page.getByRole('region', { name: 'Nodes', exact: true });
    const row = table.getByRole('row', { name: /gpu-1/ });
    await row.waitFor();
    await row.getByRole('link', { name: 'ui-journey' }).click();
    await page.getByRole('heading', { level: 1, name: 'ui-journey active' }).waitFor();
  });

  it('opens the serial console, powers the node on, sees it boot and echo what is typed', async () => {
    const row = allocationRow('gpu-1');
    await row.getByRole('button', { name: 'Open console' }).click();
    const consoleBox = page.getByRole('region', { name: 'Serial console: gpu-1' });
    await expect.poll(() => consoleBox.getByTestId('console-status').textContent()).toMatch(/^Connected\./);
    const terminal = page.getByLabel('Terminal of gpu-1');
    await expect.poll(() => terminalText(terminal)).toContain('Leasehold simulated serial console: gpu-1');
    expect(await terminalText(terminal)).toContain('the node is powered off');

    await row.getByRole('group', { name: 'Power of gpu-1' }).getByRole('button', { name: 'Power on' }).click();
    await expect.poll(() => row.getByRole('status').textContent()).toBe('Power on requested for gpu-1.');
    await expect.poll(() => powerCell('gpu-1').textContent()).toBe('power on');
    // The node boots on its serial line: firmware, kernel, systemd, then a getty.
    await expect.poll(() => terminalText(terminal)).toContain('gpu-1 login:');
    expect(await terminalText(terminal)).toContain('Reached target multi-user.target');
    expect(await terminalText(terminal)).toContain('Debian GNU/Linux 12 gpu-1 ttyS0');

    await terminal.click();
    await page.keyboard.type('ada');
    await page.keyboard.press('Enter');
    await expect.poll(() => terminalText(terminal)).toMatch(/gpu-1 login: ada\s*Password:/);
  });

  it('powers the node off after confirming', async () => {
    const row = allocationRow('gpu-1');
    await row.getByRole('group', { name: 'Power of gpu-1' }).getByRole('button', { name: 'Power off' }).click();
    const confirm = row.getByRole('group', { name: 'Power gpu-1 off?' });
    // Focus moves to the confirming button.
    expect(await confirm.getByRole('button', { name: 'Power off' }).evaluate((el: any) => el === el.ownerDocument.activeElement)).toBe(true);
    await confirm.getByRole('button', { name: 'Power off' }).click();
    await expect.poll(() => row.getByRole('status').textContent()).toBe('Power off requested for gpu-1.');
    await expect.poll(() => powerCell('gpu-1').textContent()).toBe('power off');
  });

  it('reads the boot device of the leased node and sets it to PXE for every boot', async () => {
    const form = allocationRow('gpu-1').getByRole('form', { name: 'Boot device of gpu-1' });
    await expect.poll(() => form.locator('p').first().textContent()).toMatch(/^Boot device: /);
    await form.getByRole('combobox', { name: 'New boot device of gpu-1' }).selectOption('pxe');
    await form.getByRole('checkbox', { name: 'every boot' }).check();
    await form.getByRole('button', { name: 'Set boot device' }).click();
    await expect.poll(() => form.getByRole('status').textContent()).toBe('gpu-1 boots from PXE (network), every boot.');
    await expect.poll(() => form.locator('p').first().textContent()).toBe('Boot device: PXE (network), every boot');
    expect((await ada('GET', '/v1/nodes/gpu-1/boot-device')).body).toMatchObject({ boot_device: 'pxe', persistent: true });
  });

  it('loses access when the lease ends: the console closes with the reason, power is gone and refused', async () => {
    const endsIn = Date.parse(lease.end) - Date.now();
    expect(endsIn, 'the steps before the end took longer than the lease').toBeGreaterThan(0);
    const consoleBox = page.getByRole('region', { name: 'Serial console: gpu-1' });
    await expect
      .poll(() => consoleBox.getByTestId('console-status').textContent(), { timeout: endsIn + 20_000, interval: 250 })
      .toMatch(/^Access ended with the lease: the lease ended at .* \(code 4410\)\.$/);
    // The status is React's; the terminal's line is drawn by xterm on its next frame: wait for it, too.
    await expect.poll(() => terminalText(page.getByLabel('Terminal of gpu-1')), { timeout: 10_000, interval: 250 }).toContain('Access ended with the lease');
    await consoleBox.getByText('The lease is over: access to this node has ended.').waitFor();
    // No reconnect offered for an access that ended for good.
    expect(await consoleBox.getByRole('button', { name: 'Reconnect' }).count()).toBe(0);

    // The detail follows (2 s polling near the end): ending, then ended once gpu-1 is cleaned; no power buttons.
    await expect
      .poll(async () => (await page.getByRole('heading', { level: 1 }).textContent()) ?? '', { timeout: 20_000 })
      .toMatch(/^ui-journey (ending|ended)$/);
    expect(await page.getByRole('button', { name: 'Power on' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Open console' }).count()).toBe(0);
    // What a stale page would send is refused: the node is not there for Alice any more.
    expect((await ada('POST', '/v1/nodes/gpu-1/power', { action: 'on' }, [404])).status).toBe(404);
    await expect
      .poll(async () => (await page.getByRole('heading', { level: 1 }).textContent()) ?? '', { timeout: 30_000 })
      .toBe('ui-journey ended');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Nodes', exact: true }).click();
    const table = page.getByRole('region', { name: 'Nodes', exact: true });
    await table.getByRole('row', { name: /astro-01/ }).waitFor();
    expect(await table.getByRole('row', { name: /gpu-1/ }).count()).toBe(0);
  });

  it('had no uncaught errors in the page', () => {
    expect(pageErrors).toEqual([]);
  });

  function allocationRow(node: string) {
    return page.getByRole('region', { name: 'Allocations' }).getByRole('row', { name: new RegExp(`^${node}\\b`) });
  }
  function powerCell(node: string) {
    return allocationRow(node).getByRole('cell').nth(2);
  }
});

/** What an xterm.js terminal shows, row by row (its DOM renderer uses non-breaking spaces). */
async function terminalText(terminal: ReturnType<Page['getByLabel']>): Promise<string> {
  const rows = await terminal.locator('.xterm-rows > div').allTextContents();
  return rows.map((r) => r.replace(/\u00a0/g, ' ').trimEnd()).join('\n');
}
