/**
 * The README's screenshots: `npm run screenshot` (builds first) writes docs/images/timeline.png (1280 × 800) and
 * docs/images/usage.png (the Usage page, scripts/lib/usage-screenshot.ts); `-- --only timeline|usage` makes one.
 *
 * Starts `leasehold serve` (the built server and UI) with the simulated driver's demo inventory on a free port
 * and a fresh data dir, creates the demo's owner projects and two lessee projects, offers most nodes (some only
 * for part of the day), books leases across projects and nodes (running now, later today, back to back after a
 * cleaning gap), signs in as the admin in Debian's Chromium and saves /timeline at day zoom.
 *
 * Times are laid out on the viewer's day: the browser gets the time zone in which it is about 08:30 now, so the
 * picture looks the same whenever it is taken (now at the left third, the rest of the day ahead).
 *
 *   npm run screenshot [-- --only timeline|usage] [-- --out path.png]   (--out with --only)
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHROMIUM, WEB_INDEX, launchChromium, restClient, signIn } from '../test/support/browser.js';
import { startServerProcess } from '../test/support/processes.js';
import { screenshotUsage } from './lib/usage-screenshot.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ADMIN = 'lh_screenshot-admin-token-0123456789abcdef';
const HOUR = 3_600_000;
const LOCAL_NOW_HOURS = 8.5;

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** The Etc/GMT zone (whole hours) in which it is about LOCAL_NOW_HOURS now; Etc/GMT signs are inverted. */
function zoneForMorning(now: number): { zone: string; offsetHours: number } {
  const utcHours = (now % (24 * HOUR)) / HOUR;
  let offset = Math.round(LOCAL_NOW_HOURS - utcHours);
  if (offset > 14) offset -= 24;
  if (offset < -12) offset += 24;
  const zone = offset === 0 ? 'Etc/UTC' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
  return { zone, offsetHours: offset };
}

async function main(): Promise<void> {
  const only = option('--only');
  if (only !== undefined && only !== 'timeline' && only !== 'usage') throw new Error(`--only takes "timeline" or "usage", not ${JSON.stringify(only)}`);
  if (option('--out') !== undefined && only === undefined) throw new Error('--out needs --only: which picture goes there?');
  if (!existsSync(WEB_INDEX)) throw new Error(`the UI is not built (${WEB_INDEX}): run npm run build first`);
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
  if (only !== 'usage') await screenshotTimeline(resolve(option('--out') ?? join(ROOT, 'docs/images/timeline.png')));
  if (only !== 'timeline') {
    const out = resolve(option('--out') ?? join(ROOT, 'docs/images/usage.png'));
    await mkdir(dirname(out), { recursive: true });
    const browser = await launchChromium();
    try {
      await screenshotUsage(browser, out);
    } finally {
      await browser.close();
    }
    process.stdout.write(`saved ${out} (the Usage page, 1280 wide)\n`);
  }
}

async function screenshotTimeline(out: string): Promise<void> {

  const dataDir = await mkdtemp(join(tmpdir(), 'leasehold-screenshot-'));
  const server = await startServerProcess({
    LEASEHOLD_DATA_DIR: dataDir,
    LEASEHOLD_ADMIN_TOKEN: ADMIN,
    // The demo inventory (LEASEHOLD_SIMULATED_NODES unset), ten times faster, so the running leases are active.
    LEASEHOLD_SIMULATED_TIMINGS: JSON.stringify({ speed: 10 }),
    LEASEHOLD_CLEANING_GAP: '45m',
  });
  const browser = await launchChromium();
  try {
    const admin = restClient(server.url, ADMIN);
    const as: Record<string, ReturnType<typeof restClient>> = {};
    for (const project of ['physics-lab', 'bio-lab', 'cs-dept', 'astro', 'geo-survey']) {
      await admin('POST', '/v1/projects', { name: project });
      const user = await admin('POST', '/v1/users', { name: `${project}-user`, project_id: project, role: 'member' });
      as[project] = restClient(server.url, (await admin('POST', '/v1/tokens', { user_id: user.body.id })).body.token);
    }
    await admin('POST', '/v1/nodes/sync');

    const now = Date.now();
    const { zone, offsetHours } = zoneForMorning(now);
    // Local midnight of the viewer's day, and an instant at local hour h (never before now).
    const localNow = now + offsetHours * HOUR;
    const midnight = now - (localNow % (24 * HOUR));
    const at = (h: number) => new Date(Math.max(now + 60_000, midnight + h * HOUR)).toISOString();
    const iso = (t: number) => new Date(t).toISOString();

    // Offers: most nodes from now on; a few only for part of the day; arm-02 and the node in maintenance not at all.
    const windows: Record<string, [number, number] | null> = {
      'gpu-v100-01': [11, 20],
      'gpu-t4-01': [13, 30],
      'gpu-t4-02': null, // no owner: nobody may offer it
      'store-03': [15, 40],
      'arm-02': null,
      'cpu-old-01': null,
    };
    const nodes = (await admin('GET', '/v1/nodes?limit=1000')).body.nodes as Array<{ name: string }>;
    for (const { name } of nodes) {
      const window = windows[name];
      if (window === null) continue;
      const body: Record<string, unknown> = { node_id: name };
      if (window) Object.assign(body, { start: at(window[0]), end: iso(midnight + window[1] * HOUR) });
      await admin('POST', '/v1/offers', body);
    }

    // Leases across projects and nodes: running now, later today, and back to back after a cleaning gap.
    const leases: Array<[string, string, string[], string, string]> = [
      ['astro', 'sky-survey', ['gpu-a100-01', 'gpu-a100-02'], at(0), at(13.5)],
      ['geo-survey', 'seismic-inversion', ['store-01', 'store-02'], at(0), at(18)],
      ['cs-dept', 'ci-runners', ['cpu-01', 'cpu-02'], at(0), at(12)],
      ['bio-lab', 'protein-fold', ['gpu-l40s-01'], at(0), at(16)],
      ['physics-lab', 'lattice-qcd', ['gpu-a100-04', 'bigmem-01'], at(10.5), at(23)],
      ['astro', 'sky-survey-2', ['gpu-a100-01'], at(14.5), at(21)],
      ['geo-survey', 'mesh-refine', ['arm-01'], at(12), at(19)],
      ['cs-dept', 'h100-bench', ['gpu-h100-01'], at(9.5), at(15)],
      ['cs-dept', 'ci-nightly', ['cpu-01', 'cpu-02', 'cpu-03'], at(20), at(30)],
      ['bio-lab', 'genome-assembly', ['store-nvme-01', 'gpu-v100-01'], at(11.5), at(19.5)],
      ['astro', 'spectra', ['gpu-t4-01'], at(14), at(22)],
      ['physics-lab', 'detector-sim', ['gpu-a100-03'], at(0), at(10)],
      ['physics-lab', 'detector-sim-2', ['gpu-a100-03'], at(11), at(17)],
    ];
    for (const [project, name, nodeNames, start, end] of leases) {
      // "now" leases start at once (no start: now), so they are running when the picture is taken.
      const body = { name, nodes: nodeNames, end, ...(Date.parse(start) <= now + 60_000 ? {} : { start }) };
      const res = await as[project]!('POST', '/v1/leases', body, [409]);
      if (res.status !== 201) throw new Error(`lease ${name} for ${project}: ${JSON.stringify(res.body)}`);
    }
    // Let the running leases become active.
    await new Promise((r) => setTimeout(r, 3000));

    const context = await browser.newContext({
      baseURL: server.url,
      viewport: { width: 1280, height: 800 },
      timezoneId: zone,
      locale: 'en-GB',
      colorScheme: 'light',
    });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    await signIn(page, ADMIN);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Timeline', exact: true }).click();
    await page.getByRole('group', { name: 'Zoom' }).getByRole('button', { name: 'Day', exact: true }).click();
    const grid = page.getByRole('table', { name: /^Availability/ });
    await grid.getByRole('link', { name: /sky-survey/ }).first().waitFor();
    // Fonts and layout settle; the "now" line is drawn.
    await page.waitForTimeout(500);
    await mkdir(dirname(out), { recursive: true });
    await page.screenshot({ path: out });
    await context.close();
    process.stdout.write(`saved ${out} (1280 × 800, time zone ${zone})\n`);
  } finally {
    await browser.close();
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(1);
});
