/**
 * Debian's Chromium driven by playwright-core (which downloads no browser), for the browser suite (test/browser)
 * and scripts/screenshot.ts. Also a tiny REST client for setting a server up as the admin.
 *
 *   const avail = chromiumAvailable();
 *   describe.skipIf(!avail.ok)('in the browser', () => {
 *     let browser: Browser;
 *     beforeAll(async () => { browser = await launchChromium(); });
 *     afterAll(() => browser?.close());
 *   });
 *
 * Outside CI a missing Chromium (or a missing UI build) skips, loudly; under CI (`process.env.CI` set) it is an
 * error: chromiumAvailable() throws. `.ci/run` installs Chromium (`apt-get install chromium`) before `npm test`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startServerProcess, type ServerProcess } from './processes.js';

export const CHROMIUM = process.env.LEASEHOLD_CHROMIUM ?? '/usr/bin/chromium';
export const WEB_INDEX = fileURLToPath(new URL('../../dist/web/index.html', import.meta.url));

export type ChromiumAvailability = { ok: true; version: string } | { ok: false; reason: string };

let availability: ChromiumAvailability | undefined;

function computeAvailability(): ChromiumAvailability {
  if (!existsSync(CHROMIUM)) {
    return { ok: false, reason: `${CHROMIUM} is missing (apt-get install chromium, or set LEASEHOLD_CHROMIUM)` };
  }
  if (!existsSync(WEB_INDEX)) return { ok: false, reason: `the UI is not built (${WEB_INDEX} is missing): npm run build` };
  try {
    const version = execFileSync(CHROMIUM, ['--version'], { encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return { ok: true, version };
  } catch (err) {
    return { ok: false, reason: `${CHROMIUM} --version failed: ${(err as Error).message}` };
  }
}

/** Whether the browser suite can run here; under CI a missing Chromium or UI build throws instead of skipping. */
export function chromiumAvailable(): ChromiumAvailability {
  availability ??= computeAvailability();
  if (!availability.ok) {
    if (process.env.CI) throw new Error(`Chromium is required under CI: ${availability.reason}`);
    // Loud on purpose: a skipped browser suite must not look like a passing one.
    process.stderr.write(`\n*** SKIPPING browser tests: ${availability.reason} ***\n\n`);
  }
  return availability;
}

/** Headless Chromium; `--no-sandbox` only as root (Chromium refuses to start sandboxed as root). */
export function launchChromium(): Promise<Browser> {
  const args = ['--disable-dev-shm-usage', '--disable-gpu'];
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args, timeout: 60_000 });
}

export interface RestResponse<T = any> {
  status: number;
  body: T;
}

/** A JSON REST client for one token: `call('POST', '/v1/projects', {name})`; throws on non-2xx unless expected. */
export function restClient(baseUrl: string, token: string) {
  async function call<T = any>(method: string, path: string, body?: unknown, expect?: number[]): Promise<RestResponse<T>> {
    const res = await fetch(baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const parsed = text ? JSON.parse(text) : null;
    if (!(res.ok || expect?.includes(res.status))) {
      throw new Error(`${method} ${path} → ${res.status}: ${text}`);
    }
    return { status: res.status, body: parsed as T };
  }
  return call;
}

export type RestCall = ReturnType<typeof restClient>;

/** As the admin: a project (by name), a user in it with a role, and a token for that user; returns the token. */
export async function createUserToken(admin: RestCall, project: string, user: string, role: 'reader' | 'member' | 'manager' = 'member'): Promise<string> {
  const existing = await admin('GET', `/v1/projects/${encodeURIComponent(project)}`, undefined, [404]);
  if (existing.status === 404) await admin('POST', '/v1/projects', { name: project });
  const created = await admin('POST', '/v1/users', { name: user, project_id: project, role });
  const token = await admin('POST', '/v1/tokens', { user_id: created.body.id, description: `${user} (browser tests)` });
  return token.body.token as string;
}

// ------------------------------------------------------------------------------------------- a server to browse

/** Fast simulated hardware: power in 0.2 s, a boot's console output in 0.6 s, cleaning in 1 s. */
export const FAST_TIMINGS = { powerMs: 200, bootDeviceMs: 0, cleanMs: 1000, deployMs: 300, undeployMs: 200, manageMs: 100, consoleMs: 100, bootOutputMs: 600 };

/** One node in Ironic's shape for LEASEHOLD_SIMULATED_NODES. */
export function simulatedNode(i: number, name: string, owner: string | null, memGiB: number, cpus: number, diskGb: number, gpus = 0, traits: string[] = []) {
  return {
    uuid: `b0b0b0b0-0000-4000-8000-${String(i).padStart(12, '0')}`,
    name,
    owner,
    resource_class: gpus > 0 ? 'baremetal.gpu' : 'baremetal.compute',
    properties: { memory_mb: memGiB * 1024, cpus, local_gb: diskGb, cpu_arch: 'x86_64', gpus },
    traits,
    driver_info: { ipmi_password: 'browser-bmc-secret' },
  };
}

/** The inventory of the browser suite: a lessee project (astro) with one small node; owners with GPUs and disks. */
export const BROWSER_NODES = [
  simulatedNode(1, 'astro-01', 'astro', 8, 4, 240),
  simulatedNode(2, 'gpu-1', 'physics-lab', 64, 32, 480, 1, ['CUSTOM_GPU_A100']),
  simulatedNode(3, 'gpu-2', 'physics-lab', 128, 64, 960, 2, ['CUSTOM_GPU_A100', 'CUSTOM_NVME']),
  simulatedNode(4, 'cpu-1', 'physics-lab', 16, 8, 480),
  simulatedNode(5, 'store-1', 'bio-lab', 16, 8, 4000, 0, ['CUSTOM_HDD']),
];

export interface BrowserServer {
  readonly server: ServerProcess;
  readonly url: string;
  readonly admin: RestCall;
  /** Tokens by user: ada (astro, member), pat (physics-lab, member), bo (bio-lab, member), and admin. */
  readonly tokens: Record<'admin' | 'ada' | 'pat' | 'bo', string>;
  as(user: 'admin' | 'ada' | 'pat' | 'bo'): RestCall;
  /** Stops the server and removes its data dir. */
  stop(): Promise<void>;
}

/**
 * The real `leasehold serve` (built server and UI) on a free port with a fresh data dir, BROWSER_NODES on the
 * simulated driver with FAST_TIMINGS, no cleaning gap; projects astro, physics-lab and bio-lab with one member
 * each; every node but astro-01 offered (open-ended, to every project).
 */
export async function startBrowserServer(adminToken: string, env: Record<string, string> = {}): Promise<BrowserServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'leasehold-browser-'));
  let server: ServerProcess;
  try {
    server = await startServerProcess({
      LEASEHOLD_DATA_DIR: dataDir,
      LEASEHOLD_ADMIN_TOKEN: adminToken,
      LEASEHOLD_SIMULATED_NODES: JSON.stringify(BROWSER_NODES),
      LEASEHOLD_SIMULATED_TIMINGS: JSON.stringify(FAST_TIMINGS),
      LEASEHOLD_CLEANING_GAP: '0s',
      ...env,
    });
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  const admin = restClient(server.url, adminToken);
  const tokens = {
    admin: adminToken,
    ada: await createUserToken(admin, 'astro', 'ada'),
    pat: await createUserToken(admin, 'physics-lab', 'pat'),
    bo: await createUserToken(admin, 'bio-lab', 'bo'),
  };
  // The nodes were read before their owner projects existed: read them again so they belong to them.
  await admin('POST', '/v1/nodes/sync');
  for (const node of BROWSER_NODES) if (node.owner !== 'astro') await admin('POST', '/v1/offers', { node_id: node.name });
  return {
    server,
    url: server.url,
    admin,
    tokens,
    as: (user) => restClient(server.url, tokens[user]),
    stop: async () => {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Signs in through the sign-in page with the "Token" field and waits for the first page. */
export async function signIn(page: Page, token: string): Promise<void> {
  await page.goto('/');
  await page.getByLabel('Token', { exact: true }).fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}
