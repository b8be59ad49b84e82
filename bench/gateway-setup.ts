import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GatewayAuth } from './options.js';
import { sleep } from './stats.js';

/**
 * Section 4's set-up: a real standalone Ironic (scripts/ironic-standalone.sh: one process, SQLite, fake-hardware,
 * no fake delays; `noauth` or `http_basic`), nodes enrolled in it, the real `leasehold serve` against it as its own
 * process, and a lessee with an active lease on the first node. The measuring is in gateway-latency.ts.
 */

const SCRIPT = fileURLToPath(new URL('../scripts/ironic-standalone.sh', import.meta.url));
const LEASEHOLD_BIN = fileURLToPath(new URL('../bin/leasehold.js', import.meta.url));
/** Both sides send the microversion the Zed `baremetal` CLI sends; the gateway forwards the client's. */
const MICROVERSION = '1.78';
/**
 * Ironic runs in its own session (setsid), so a bench killed before its cleanup leaves it running: the test
 * suites' reaper (test/support/ironic.ts) stops instances under this prefix whose owner.pid is gone.
 */
const DATA_DIR_PREFIX = 'leasehold-ironic-';
const ADMIN_TOKEN = 'lh_bench-gateway-admin-token-0123456789abcdef';
const OWNERS = 'gw-bench-owners';
const NODES = 3;
/** The http_basic user; its password is random per run (the script stores it bcrypt-hashed, cost 4). */
const IRONIC_USER = 'leasehold-bench';

export const IRONIC_MISSING = 'skipped: no Ironic (scripts/ironic-standalone.sh install)';

export type Reply = { readonly status: number; readonly text: string };
export type Call = (method: string, path: string, body?: unknown) => Promise<Reply>;
export type Cleanups = Array<() => Promise<void>>;

/** What section 4 measures against: Ironic called directly (with its credentials, if any) and the gateway. */
export interface GatewayStack {
  readonly ironicUrl: string;
  /** A call straight to Ironic, with the `Authorization: Basic` header under http_basic. */
  readonly ironic: Call;
  /** The leased node's Ironic UUID. */
  readonly uuid: string;
  readonly serverUrl: string;
  readonly serverPid: number | undefined;
  readonly lesseeToken: string;
}

export const ironicInstalled = (): boolean => ['/usr/bin/ironic', '/usr/bin/ironic-dbsync', SCRIPT].every((f) => existsSync(f));

/** Starts everything for one variant; each stop is pushed onto `cleanups` (the caller runs them, last first). */
export async function startGatewayStack(auth: GatewayAuth, cleanups: Cleanups, progress: (message: string) => void): Promise<GatewayStack> {
  const credentials = auth === 'http_basic' ? { user: IRONIC_USER, password: randomBytes(18).toString('base64url') } : null;
  const ironicUrl = await startIronic(credentials, cleanups);
  const authHeader: Record<string, string> = credentials
    ? { Authorization: `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}` }
    : {};
  const ironic: Call = (method, path, body) => call(`${ironicUrl}${path}`, method, authHeader, body);
  const uuids = await Promise.all(Array.from({ length: NODES }, (_, i) => enrol(ironic, `gw-bench-${i}`)));
  progress(`4 [${auth}]: Ironic at ${ironicUrl}, ${NODES} nodes enrolled; starting leasehold serve`);
  const server = await startLeasehold(ironicUrl, credentials, cleanups);
  const { lesseeToken, projectId } = await leaseOneNode(server.url);
  const uuid = uuids[0]!;
  // The engine hands the node over by PATCHing Ironic's lessee: wait for it, so it does not land in a sample.
  await until(async () => JSON.parse((await ironic('GET', `/v1/nodes/${uuid}?fields=lessee`)).text).lessee === projectId, 30_000, 'lessee set in Ironic');
  return { ironicUrl, ironic, uuid, serverUrl: server.url, serverPid: server.proc.pid, lesseeToken };
}

/**
 * One HTTP call the way a client makes it: Node's fetch (undici, keep-alive connection pool per origin) for both
 * sides, the same microversion header, the body read to the end.
 */
export async function call(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<Reply> {
  const res = await fetch(url, {
    method,
    headers: {
      Accept: 'application/json',
      'X-OpenStack-Ironic-API-Version': MICROVERSION,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, text: await res.text() };
}

export async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(20);
  }
}

// ------------------------------------------------------------------------------------------------ Ironic

function runScript(args: readonly string[], timeoutMs: number): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', [SCRIPT, ...args], { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 2 ** 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no free port'))));
    });
  });
}

type Credentials = { readonly user: string; readonly password: string } | null;

/** Starts Ironic on a free port (a port taken meanwhile: another try); its stop is pushed onto `cleanups`. */
async function startIronic(credentials: Credentials, cleanups: Cleanups): Promise<string> {
  const authArgs = credentials ? ['--auth', 'http_basic', '--user', credentials.user, '--password', credentials.password] : ['--auth', 'noauth'];
  let last = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const dataDir = mkdtempSync(join(tmpdir(), DATA_DIR_PREFIX));
    writeFileSync(join(dataDir, 'owner.pid'), `${process.pid}\n`);
    const stop = async () => {
      await runScript(['stop', dataDir], 60_000);
      rmSync(dataDir, { recursive: true, force: true });
    };
    const res = await runScript(['start', dataDir, '--port', String(await freePort()), ...authArgs], 120_000);
    const url = res.stdout.trim().split('\n').pop() ?? '';
    if (res.code === 0 && url.startsWith('http://')) {
      cleanups.push(stop);
      return url;
    }
    last = `ironic-standalone.sh start failed (${res.code}):\n${res.stderr.slice(-4000)}`;
    await stop();
  }
  throw new Error(last);
}

/** Calls Ironic for the set-up, retrying `409 … locked` (two state changes back to back on one node). */
async function ironicOk(ironic: Call, method: string, path: string, body?: unknown): Promise<any> {
  for (let attempt = 0; ; attempt++) {
    const reply = await ironic(method, path, body);
    if (reply.status < 300) return reply.text ? JSON.parse(reply.text) : null;
    if (reply.status !== 409 || !/locked/i.test(reply.text) || attempt > 20) throw new Error(`Ironic ${method} ${path} → ${reply.status}: ${reply.text.slice(0, 500)}`);
    await sleep(100);
  }
}

/** A fake-hardware node brought to `available` the way an operator enrols one: manage, power off, owner, provide. */
async function enrol(ironic: Call, name: string): Promise<string> {
  const fake = ['bios', 'boot', 'console', 'deploy', 'inspect', 'management', 'power', 'raid', 'rescue', 'vendor'];
  const node = await ironicOk(ironic, 'POST', '/v1/nodes', {
    name,
    driver: 'fake-hardware',
    ...Object.fromEntries(fake.map((i) => [`${i}_interface`, 'fake'])),
    network_interface: 'noop',
    storage_interface: 'noop',
    resource_class: 'baremetal.general',
    properties: { memory_mb: 131072, cpus: 32, local_gb: 960, cpu_arch: 'x86_64', capabilities: 'boot_mode:uefi' },
    driver_info: { ipmi_address: '192.0.2.10', ipmi_username: 'root', ipmi_password: 'bmc-secret-never-shown' },
  });
  const uuid = node.uuid as string;
  const waitFor = (what: string, done: (n: any) => boolean) =>
    until(async () => done(await ironicOk(ironic, 'GET', `/v1/nodes/${uuid}`)), 60_000, `${name} ${what}`);
  await ironicOk(ironic, 'PUT', `/v1/nodes/${uuid}/states/provision`, { target: 'manage' });
  await waitFor('manageable', (n) => n.provision_state === 'manageable' && !n.target_provision_state);
  // Fake nodes start with power_state null: power off once, as an operator's first inspection would.
  await ironicOk(ironic, 'PUT', `/v1/nodes/${uuid}/states/power`, { target: 'power off' });
  await waitFor('powered off', (n) => n.power_state === 'power off' && !n.target_power_state);
  await ironicOk(ironic, 'PATCH', `/v1/nodes/${uuid}`, [{ op: 'add', path: '/owner', value: OWNERS }]);
  await ironicOk(ironic, 'PUT', `/v1/nodes/${uuid}/states/provision`, { target: 'provide' });
  await waitFor('available', (n) => n.provision_state === 'available' && !n.target_provision_state);
  return uuid;
}

/** Ironic's package version and highest API microversion. */
export async function ironicVersion(ironic: Call): Promise<string> {
  const root = JSON.parse((await ironic('GET', '/')).text) as { versions?: Array<{ version?: string }> };
  const api = root.versions?.[0]?.version ?? '?';
  const pkg = await new Promise<string>((resolve) =>
    execFile('dpkg-query', ['-W', '-f=${Version}', 'python3-ironic'], (err, stdout) => resolve(err ? '?' : String(stdout).trim())),
  );
  return `Ironic ${pkg.replace(/^\d+:/, '')} (API up to ${api})`;
}

// ------------------------------------------------------------------------------------------------ Leasehold

/**
 * `leasehold serve` as its own process against the Ironic (IRONIC_AUTH_TYPE=http_basic with the same credentials
 * when Ironic wants them), with a throwaway data dir (embedded PGlite) and the default log level (info: one access
 * log line per request, as deployed). Sync and reconcile every 10 min instead of 60 s / 30 s: their full-inventory
 * reads are periodic background work, not a cost of the call measured, and would otherwise land in a few samples
 * of either kind.
 */
async function startLeasehold(ironicUrl: string, credentials: Credentials, cleanups: Cleanups): Promise<{ url: string; proc: ChildProcess }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'leasehold-bench-gateway-'));
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? tmpdir(),
    LEASEHOLD_DRIVER: 'ironic',
    IRONIC_URL: ironicUrl,
    ...(credentials
      ? { IRONIC_AUTH_TYPE: 'http_basic', IRONIC_USERNAME: credentials.user, IRONIC_PASSWORD: credentials.password }
      : { IRONIC_AUTH_TYPE: 'none' }),
    LEASEHOLD_DATA_DIR: dataDir,
    LEASEHOLD_ADMIN_TOKEN: ADMIN_TOKEN,
    LEASEHOLD_CLEANING_GAP: '0s',
    LEASEHOLD_SYNC_INTERVAL: '10m',
    LEASEHOLD_RECONCILE_INTERVAL: '10m',
  };
  const proc = spawn(process.execPath, [LEASEHOLD_BIN, 'serve', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  cleanups.push(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const killer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`leasehold serve did not listen within 60 s:\n${out.slice(-4000)}`)), 60_000);
    let listening = false;
    // The output is read all along (a full pipe would block the server); only its tail is kept, for errors.
    const keep = (d: Buffer) => {
      out = (out + d.toString()).slice(-16_384);
      const m = listening ? null : /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        listening = true;
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    proc.stdout!.on('data', keep);
    proc.stderr!.on('data', keep);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`leasehold serve exited before listening:\n${out.slice(-4000)}`));
    });
  });
  return { url, proc };
}

/**
 * Through Leasehold's REST API, as its users would: the owner project and a member (the nodes' Ironic owner is
 * the project's name), an offer on the first node, and a lessee project whose member leases it for two hours.
 */
async function leaseOneNode(url: string): Promise<{ lesseeToken: string; projectId: string }> {
  const api = async (token: string, method: string, path: string, body?: unknown): Promise<any> => {
    const reply = await call(`${url}${path}`, method, { authorization: `Bearer ${token}` }, body);
    if (reply.status >= 300) throw new Error(`Leasehold ${method} ${path} → ${reply.status}: ${reply.text.slice(0, 500)}`);
    return JSON.parse(reply.text);
  };
  const member = async (projectName: string) => {
    const project = await api(ADMIN_TOKEN, 'POST', '/v1/projects', { name: projectName });
    const user = await api(ADMIN_TOKEN, 'POST', '/v1/users', { name: `${projectName}-member`, project_id: project.id, role: 'member' });
    return { projectId: project.id as string, token: (await api(ADMIN_TOKEN, 'POST', '/v1/tokens', { user_id: user.id })).token as string };
  };
  const owner = await member(OWNERS);
  const lessee = await member('gw-bench-lessees');
  await api(owner.token, 'POST', '/v1/offers', { node_id: 'gw-bench-0', max_lease_duration: '1d' });
  const lease = await api(lessee.token, 'POST', '/v1/leases', { nodes: ['gw-bench-0'], duration: '2h' });
  return { lesseeToken: lessee.token, projectId: lease.project_id as string };
}

/** Peak resident set of a process (Linux /proc VmHWM), bytes. */
export function peakRss(pid: number | undefined): number | null {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}
