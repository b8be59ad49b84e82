/**
 * The README's screenshot of the Usage page (docs/images/usage.png, 1280 wide), for scripts/screenshot.ts.
 *
 * Usage is use that happened, so it cannot be booked into the past on a running server: this starts the API
 * in-process (test/support/test-app.ts: the demo inventory on the simulated driver, a manual clock at
 * 2030-03-01T00:00Z) on a socket serving the built UI, books three weeks of leases across five projects, moves
 * the clock through them an hour at a time with the engine running (so each node is handed over and released as
 * on a real server), then signs in as the operator in Chromium, its clock set to the server's, and saves /usage
 * grouped by project. The same inputs give the same picture on any day.
 */
import type { Browser } from 'playwright-core';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { demoInventory } from '../../src/drivers/simulated/demo-inventory.js';
import { LeaseEngine } from '../../src/engine/lease-engine.js';
import { createLogger } from '../../src/logger.js';
import { signIn } from '../../test/support/browser.js';
import { ADMIN_TOKEN, createProjectUser, startApp } from '../../test/support/test-app.js';

const H = 3_600_000;
const T0 = Date.parse('2030-03-01T00:00:00Z');
const DAYS = 21;

/** Offer prices per node-hour, by node name prefix (the rest are free). */
const PRICES: Array<[string, string, string]> = [
  ['gpu-a100', '2.50', 'EUR'],
  ['gpu-h100', '4.00', 'EUR'],
  ['gpu-l40s', '1.80', 'EUR'],
  ['bigmem', '1.20', 'EUR'],
];

/**
 * Who leases what, and on which days: [project, lease name, nodes, first day, every n days, start hour, hours].
 * Spread so that the month has a working-week rhythm and a busy spell in its second week.
 */
const PLAN: Array<[string, string, string[], number, number, number, number]> = [
  ['astro', 'sky-survey', ['gpu-a100-01', 'gpu-a100-02'], 0, 1, 8, 10],
  ['astro', 'spectra', ['gpu-t4-01'], 2, 3, 6, 14],
  ['geo-survey', 'seismic-inversion', ['store-01', 'store-02', 'cpu-03'], 1, 2, 0, 20],
  ['geo-survey', 'mesh-refine', ['arm-01'], 7, 1, 12, 9],
  ['bio-lab', 'protein-fold', ['gpu-l40s-01', 'gpu-a100-03'], 3, 2, 4, 16],
  ['bio-lab', 'genome-assembly', ['bigmem-01'], 8, 1, 2, 18],
  ['cs-dept', 'ci-runners', ['cpu-01', 'cpu-02'], 0, 1, 6, 12],
  ['cs-dept', 'h100-bench', ['gpu-h100-01'], 9, 4, 9, 8],
];

export async function screenshotUsage(browser: Browser, out: string): Promise<void> {
  const t = await startApp({ listen: true, nodes: demoInventory(), clock: new ManualClock(new Date(T0)) });
  try {
    const engine = new LeaseEngine({ store: t.store, driver: t.driver, clock: t.clock, logger: createLogger('silent'), inventory: t.inventory, networks: t.teardown, watchMs: 0 });
    const tokens: Record<string, string> = {};
    for (const project of ['physics-lab', 'bio-lab', 'cs-dept', 'astro', 'geo-survey']) tokens[project] = (await createProjectUser(t, project, 'member')).token;
    await t.inventory.syncAll();
    const nodes = (await t.request('GET', '/v1/nodes?limit=1000')).body.nodes as Array<{ name: string; owner_project: { name: string } | null }>;
    for (const n of nodes) {
      if (!n.owner_project) continue;
      const price = PRICES.find(([prefix]) => n.name.startsWith(prefix));
      const body = { node_id: n.name, ...(price ? { price_per_node_hour: price[1], currency: price[2] } : {}) };
      const res = await t.request('POST', '/v1/offers', { token: tokens[n.owner_project.name], body });
      if (res.status !== 201) throw new Error(`offer of ${n.name}: ${JSON.stringify(res.body)}`);
    }
    for (const [project, name, nodeNames, first, every, hour, hours] of PLAN) {
      for (let day = first; day < DAYS; day += every) {
        // Weekends are quiet for the CI runners (2030-03-01 is a Friday).
        if (name === 'ci-runners' && [1, 2].includes(day % 7)) continue;
        const start = T0 + day * 24 * H + hour * H;
        const body = { name: `${name}-${day + 1}`, nodes: nodeNames, start: new Date(start).toISOString(), end: new Date(start + hours * H).toISOString() };
        const res = await t.request('POST', '/v1/leases', { token: tokens[project]!, body });
        if (res.status !== 201) throw new Error(`lease ${body.name} for ${project}: ${JSON.stringify(res.body)}`);
      }
    }
    const until = T0 + DAYS * 24 * H + 12 * H;
    for (let now = T0 + H; now <= until; now += H) {
      await t.clock.advanceTo(new Date(now));
      await engine.runDue();
    }

    const context = await browser.newContext({ baseURL: t.url!, viewport: { width: 1280, height: 800 }, locale: 'en-GB', timezoneId: 'UTC', colorScheme: 'light' });
    await context.clock.setFixedTime(new Date(until));
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await signIn(page, ADMIN_TOKEN);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Usage', exact: true }).click();
    await page.getByLabel('Group by').selectOption({ label: 'Project' });
    await page.getByRole('region', { name: 'Usage by group' }).getByRole('row', { name: /^astro/ }).waitFor();
    await page.waitForTimeout(300);
    await page.screenshot({ path: out, fullPage: true });
    await context.close();
  } finally {
    await t.close();
  }
}
