import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { LeaseEngine } from '../../src/engine/lease-engine.js';
import { createLogger } from '../../src/logger.js';
import { chromiumAvailable, launchChromium, signIn } from '../support/browser.js';
import { createProjectUser, startApp, type TestApp } from '../support/test-app.js';

const avail = chromiumAvailable();

/**
 * An owner's day in Chromium, against the real API (the in-process app on a socket, serving the built UI) on the
 * simulated driver and a manual clock, the browser's clock set to the same instant: the owner's nodes, an offer
 * made through the form and then listed, who leases its nodes, and the Usage page with two days of use seeded
 * through the API — the table and the chart show figures a person can check by hand (hours × nodes × price). At
 * phone width the timeline tells the owner's long, alike node names apart.
 */
const T0 = Date.parse('2030-03-10T00:00:00Z');
const H = 3_600_000;
const at = (ms: number) => new Date(T0 + ms).toISOString();
// Long names sharing a long beginning, as racks name their machines: what a narrow name column has to tell apart.
const node = (n: number, name: string, gpus: number) => ({
  uuid: `0b5e0000-0000-4000-8000-00000000000${n}`,
  name,
  owner: 'hw-lab',
  properties: { memory_mb: 65536, cpus: 16, local_gb: 480, cpu_arch: 'x86_64', gpus },
});
const NODES = [
  node(1, 'hw-lab-rack07-gpu-a100-01', 1),
  node(2, 'hw-lab-rack07-gpu-a100-02', 1),
  node(3, 'hw-lab-rack07-cpu-epyc-01', 0),
  node(4, 'hw-lab-rack07-gpu-a100-03', 1),
];

describe.skipIf(!avail.ok)('the owner pages and the usage page in the browser', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    [t, browser] = await Promise.all([startApp({ listen: true, nodes: NODES, clock: new ManualClock(new Date(T0)) }), launchChromium()]);
    const engine = new LeaseEngine({ store: t.store, driver: t.driver, clock: t.clock, logger: createLogger('silent'), inventory: t.inventory, networks: t.teardown, watchMs: 0 });
    const owner = await createProjectUser(t, 'hw-lab', 'member');
    const astro = await createProjectUser(t, 'astro', 'member');
    const geo = await createProjectUser(t, 'geo', 'member');
    // Three nodes offered through the API, two of them at a price; the fourth is offered through the form below.
    const prices: Record<string, object> = { [NODES[0]!.name]: { price_per_node_hour: '2.50', currency: 'EUR' }, [NODES[1]!.name]: { price_per_node_hour: '2.50', currency: 'EUR' } };
    for (const n of NODES.slice(0, 3)) {
      const res = await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: n.name, ...prices[n.name] } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    // Day 1: astro holds both GPU nodes for 4 h (8 node-hours, 20.00 EUR). Day 2: geo holds the CPU node for 3 h.
    // Day 4 (upcoming): geo has booked a GPU node.
    const lease = async (token: string, body: object) => {
      const res = await t.request('POST', '/v1/leases', { token, body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    };
    await lease(astro.token, { name: 'sky-survey', nodes: [NODES[0]!.name, NODES[1]!.name], start: at(H), end: at(5 * H) });
    await lease(geo.token, { name: 'seismic', nodes: [NODES[2]!.name], start: at(26 * H), end: at(29 * H) });
    await lease(geo.token, { name: 'inversion', nodes: [NODES[0]!.name], start: at(72 * H), end: at(80 * H) });
    for (const when of [H, 5 * H, 26 * H, 29 * H, 48 * H]) {
      await t.clock.advanceTo(new Date(T0 + when));
      await engine.runDue();
    }

    // The browser's clock is the server's: the Usage page opens on the server's month, the countdowns agree.
    context = await browser.newContext({ baseURL: t.url!, viewport: { width: 1280, height: 900 }, locale: 'en-GB', timezoneId: 'Europe/Berlin' });
    await context.clock.setFixedTime(new Date(T0 + 48 * H));
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (err) => pageErrors.push(String(err)));
    await signIn(page, owner.token);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

  it("the owner's navigation has the owner pages, and Nodes lists the nodes it owns", async () => {
    const links = await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents();
    expect(links).toEqual(expect.arrayContaining(['Nodes', 'Offers', "My nodes' leases", 'Usage']));
    await nav('Nodes').click();
    const table = page.getByRole('region', { name: 'Nodes', exact: true });
    for (const n of NODES) await table.getByRole('row', { name: new RegExp(n.name) }).waitFor();
  });

  it('the owner offers a node through the form, in UTC with its local time alongside, nights and weekends only, and sees the offer listed', async () => {
    await nav('Offers').click();
    const offers = page.getByRole('region', { name: 'Offers' });
    for (const n of NODES.slice(0, 3)) await offers.getByRole('row', { name: new RegExp(n.name) }).waitFor();
    expect(await offers.getByRole('row', { name: new RegExp(NODES[3]!.name) }).count()).toBe(0);

    await page.getByLabel('Node', { exact: true }).selectOption({ label: NODES[3]!.name });
    await page.getByLabel('End (UTC)').fill('2030-03-20T18:00');
    // 18:00 UTC is 19:00 in Berlin in March (CET).
    await expect.poll(() => page.locator('#offer-end-hint').textContent()).toMatch(/^Your time: .*19:00 \(Europe\/Berlin\)$/);
    await page.getByLabel('Longest lease').fill('2d');
    await page.getByLabel('Weekly windows').fill('mon-fri 18:00-08:00; sat-sun');
    await page.getByLabel('Timezone').fill('Europe/Berlin');
    await page.getByRole('button', { name: 'Offer node' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe(`${NODES[3]!.name} is offered (active).`);
    const row = offers.getByRole('row', { name: new RegExp(NODES[3]!.name) });
    await expect.poll(() => row.textContent()).toMatch(/until 20 Mar 2030, 19:00.*Mon–Fri 18:00–08:00 \(next day\), Sat–Sun all day \(Europe\/Berlin\).*active.*at most 2d/);
    const listed = await t.request('GET', '/v1/offers?limit=100');
    const made = listed.body.offers.find((o: { node_name: string }) => o.node_name === NODES[3]!.name);
    expect(made).toMatchObject({ end: '2030-03-20T18:00:00.000Z', max_lease_duration: 'P2D', status: 'active', weekly: ['mon-fri 18:00-08:00', 'sat-sun 00:00-24:00'], timezone: 'Europe/Berlin' });
  });

  it("My nodes' leases shows who has booked the owner's nodes", async () => {
    await nav("My nodes' leases").click();
    const row = page.getByRole('region', { name: 'Leases on my nodes' }).getByRole('row', { name: /geo/ });
    await expect.poll(() => row.textContent()).toMatch(/geo.*inversion.*hw-lab-rack07-gpu-a100-01.*pending/);
  });

  it("the Usage page shows the use of the owner's nodes: node-hours, allocations and charges per lessee, and the days in the chart", async () => {
    await nav('Usage').click();
    await expect.poll(() => page.getByLabel('Month (UTC)').inputValue()).toBe('2030-03');
    await page.getByLabel('Whose use').selectOption({ label: 'Leases of my nodes' });
    await page.getByLabel('Group by').selectOption({ label: 'Project' });
    const table = page.getByRole('region', { name: 'Usage by group' });
    const cells = async (name: RegExp) => (await table.getByRole('row', { name }).locator('th, td').allTextContents()).map((s) => s.trim());
    // 2 nodes × 4 h at 2.50 EUR; 1 node × 3 h without a price; the total adds the hours, never the currencies.
    await expect.poll(() => cells(/^astro/)).toEqual(['astro', '8.00', '2', '20.00 EUR']);
    expect(await cells(/^geo/)).toEqual(['geo', '3.00', '1', '—']);
    expect(await cells(/^Total/)).toEqual(['Total', '11.00', '3', '20.00 EUR']);

    const chart = page.getByRole('img', { name: 'Node-hours per day' });
    const day = (date: string) => chart.locator(`g[data-date="${date}"]`);
    expect(await day('2030-03-10').locator('title').textContent()).toBe('2030-03-10: 8.0 node-hours');
    expect(await day('2030-03-11').locator('title').textContent()).toBe('2030-03-11: 3.0 node-hours');
    expect(await day('2030-03-12').locator('rect').count()).toBe(0);
    expect(await chart.locator('g[data-date]').count()).toBe(31);
    const legend = await page.getByRole('list', { name: 'Legend' }).getByRole('listitem').allTextContents();
    expect(legend).toEqual(['astro', 'geo']);
  });

  it('at phone width the timeline tells alike node names apart, each label whole in its column, the full name on hover', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    await nav('Timeline').click().catch(async () => {
      // At phone width the navigation may sit behind a menu button.
      await page.getByRole('button', { name: /menu/i }).click();
      await nav('Timeline').click();
    });
    const grid = page.getByRole('table', { name: /^Availability/ });
    const headers = grid.getByRole('rowheader');
    await expect.poll(() => headers.count()).toBe(NODES.length);
    const shown = await grid.locator('.tl-name-text').evaluateAll((els) =>
      els.map((el) => ({ text: el.textContent, clipped: el.scrollWidth > el.clientWidth + 1 })),
    );
    expect(new Set(shown.map((s) => s.text)).size).toBe(NODES.length);
    // Every label is whole: not cut again by the column.
    expect(shown.filter((s) => s.clipped)).toEqual([]);
    for (const n of NODES) expect(await grid.getByRole('rowheader', { name: n.name }).getAttribute('title')).toBe(n.name);
  });

  it('had no uncaught errors in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
