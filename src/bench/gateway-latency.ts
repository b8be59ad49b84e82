import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Sizes } from './options.js';
import { sleep } from './stats.js';

/**
 * Section 4: what Leasehold's Ironic-compatible gateway (`/baremetal`) costs a client, against the same call sent
 * straight to Ironic. A real standalone Ironic (scripts/ironic-standalone.sh: one process, SQLite, fake-hardware,
 * noauth, no fake delays) and the real `leasehold serve` (LEASEHOLD_DRIVER=ironic, embedded PGlite store) run as
 * their own processes, as in production; this process is only the client. A lessee with an active lease on the
 * node makes the gateway calls, so each goes through token authentication, the lease-table lookup, the node
 * policy and (GET) the redaction before the forward.
 */

const SCRIPT = fileURLToPath(new URL('../../scripts/ironic-standalone.sh', import.meta.url));
const LEASEHOLD_BIN = fileURLToPath(new URL('../../bin/leasehold.js', import.meta.url));
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
/**
 * Power PUTs start this long after the previous one answered: Ironic locks the node for the fake power action
 * (≈ 45 ms; another PUT meanwhile is a 409 the gateway would retry after 200 ms), and the gateway refreshes the
 * node from Ironic 200 ms after forwarding a change (inventory.followNode): neither may overlap a measured call.
 */
const POWER_SPACING_MS = 250;

export const IRONIC_MISSING = 'skipped: no Ironic (scripts/ironic-standalone.sh install)';

/** Milliseconds (nearest rank), and the sample count. */
export type Percentiles = Readonly<Record<'n' | 'p50' | 'p95' | 'p99' | 'mean' | 'max', number>>;

export interface Comparison {
  readonly direct: Percentiles;
  readonly gateway: Percentiles;
}

export interface GatewayLatencyResult {
  /** Ironic's package version and highest API microversion. */
  readonly ironic: string;
  readonly warmup: number;
  readonly get: Comparison;
  readonly power: Comparison;
  /**
   * Leasehold alone, no Ironic call, timed in the same GET rounds: `GET /healthz` (the extra HTTP hop and the
   * middleware) and the REST `GET /v1/nodes/{uuid}` as the lessee (that plus the token, node and lease lookups the
   * gateway makes before it forwards).
   */
  readonly reference: { readonly health: Percentiles; readonly lookup: Percentiles };
  /** GETs with `clients` concurrent clients, bursts of `burst` requests per kind and round, interleaved. */
  readonly throughput: { readonly clients: number; readonly requests: number; readonly direct: number; readonly gateway: number };
  /** Answers other than 200 (GET) and 202 (PUT), by kind and status; such calls are not counted as samples. */
  readonly unexpected: Record<string, number>;
  /** Peak RSS of the `leasehold serve` process (VmHWM), bytes; null off Linux. */
  readonly serverRssPeak: number | null;
  /** 1-minute load average when the section started and ended: other work on the machine skews the figures. */
  readonly load: { readonly start: number; readonly end: number };
}

export type GatewaySection = { readonly result: GatewayLatencyResult } | { readonly skipped: string };

type Kind = 'direct' | 'gateway';
type Call = (method: string, path: string, body?: unknown) => Promise<Reply>;
type Sample = Pick<Sizes, 'gatewaySamples' | 'gatewayWarmup' | 'gatewayClients' | 'gatewayRounds' | 'gatewayBurst'>;
type Reply = { readonly status: number; readonly text: string };

/** What the measuring loops share: the node, the two ways to it, and the tally of unexpected answers. */
interface Rig {
  readonly uuid: string;
  readonly serverUrl: string;
  readonly lesseeToken: string;
  readonly ironic: Call;
  send(kind: Kind, method: string, path: string, body?: unknown): Promise<Reply>;
  /** True when `reply` has `status`; anything else is counted under `what` and not used as a sample. */
  expect(what: string, reply: Reply, status: number): boolean;
}

/** Runs section 4, or says why it cannot (Ironic not installed); everything it started is stopped at the end. */
export async function benchGatewayLatency(sizes: Sample, progress: (message: string) => void): Promise<GatewaySection> {
  if (!['/usr/bin/ironic', '/usr/bin/ironic-dbsync', SCRIPT].every((f) => existsSync(f))) return { skipped: IRONIC_MISSING };
  const loadStart = loadavg()[0]!;
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const ironicUrl = await startIronic(cleanups);
    const ironic: Call = (method, path, body) => call(`${ironicUrl}${path}`, method, {}, body);
    const uuids = await Promise.all(Array.from({ length: NODES }, (_, i) => enrol(ironic, `gw-bench-${i}`)));
    progress(`4: Ironic at ${ironicUrl}, ${NODES} nodes enrolled; starting leasehold serve`);
    const server = await startLeasehold(ironicUrl, cleanups);
    const { lesseeToken, projectId } = await leaseOneNode(server.url);
    const uuid = uuids[0]!;
    // The engine hands the node over by PATCHing Ironic's lessee: wait for it, so it does not land in a sample.
    await until(async () => JSON.parse((await ironic('GET', `/v1/nodes/${uuid}?fields=lessee`)).text).lessee === projectId, 30_000, 'lessee set in Ironic');
    const unexpected: Record<string, number> = {};
    const rig: Rig = {
      uuid,
      serverUrl: server.url,
      lesseeToken,
      ironic,
      send: (kind, method, path, body) =>
        kind === 'direct' ? ironic(method, path, body) : call(`${server.url}/baremetal${path}`, method, { 'X-Auth-Token': lesseeToken }, body),
      expect(what, reply, status) {
        if (reply.status !== status) unexpected[`${what} ${reply.status}`] = (unexpected[`${what} ${reply.status}`] ?? 0) + 1;
        return reply.status === status;
      },
    };
    progress(`4: ${sizes.gatewayWarmup} + ${sizes.gatewaySamples} GETs per kind, one at a time, interleaved`);
    const gets = await measureGets(rig, sizes);
    progress(`4: ${sizes.gatewayWarmup} + ${sizes.gatewaySamples} power PUTs per kind, ${POWER_SPACING_MS} ms apart and the node idle`);
    const power = await measurePower(rig, sizes);
    progress(`4: throughput, ${sizes.gatewayClients} clients, ${sizes.gatewayRounds} × ${sizes.gatewayBurst} GETs per kind`);
    const throughput = await measureThroughput(rig, sizes);
    return {
      result: {
        ironic: await ironicVersion(ironicUrl),
        warmup: sizes.gatewayWarmup,
        get: { direct: percentiles(gets.direct), gateway: percentiles(gets.gateway) },
        power,
        reference: { health: percentiles(gets.health), lookup: percentiles(gets.lookup) },
        throughput,
        unexpected,
        serverRssPeak: peakRss(server.proc.pid),
        load: { start: loadStart, end: loadavg()[0]! },
      },
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err: unknown) => progress(`4: cleanup failed: ${String(err)}`));
  }
}

/** One client, interleaved: each round times the node GET both ways, then the two Leasehold-only references. */
async function measureGets(rig: Rig, sizes: Sample): Promise<Record<Kind | 'health' | 'lookup', number[]>> {
  const samples: Record<Kind | 'health' | 'lookup', number[]> = { direct: [], gateway: [], health: [], lookup: [] };
  const path = `/v1/nodes/${rig.uuid}`;
  const references = [
    ['health', () => call(`${rig.serverUrl}/healthz`, 'GET', {})],
    ['lookup', () => call(`${rig.serverUrl}${path}`, 'GET', { authorization: `Bearer ${rig.lesseeToken}` })],
  ] as const;
  for (let i = 0; i < sizes.gatewayWarmup + sizes.gatewaySamples; i++) {
    for (const [kind, get] of [...order(i).map((k) => [k, () => rig.send(k, 'GET', path)] as const), ...references]) {
      const t0 = performance.now();
      const reply = await get();
      const ms = performance.now() - t0;
      if (rig.expect(`${kind} GET`, reply, 200) && i >= sizes.gatewayWarmup) samples[kind].push(ms);
    }
  }
  return samples;
}

/** One client, interleaved, alternating power on and off; every PUT on an idle node, POWER_SPACING_MS apart. */
async function measurePower(rig: Rig, sizes: Sample): Promise<Comparison> {
  const samples: Record<Kind, number[]> = { direct: [], gateway: [] };
  let lastEnd = performance.now();
  let on = true;
  for (let i = 0; i < sizes.gatewayWarmup + sizes.gatewaySamples; i++) {
    for (const kind of order(i)) {
      await idle(rig, lastEnd + POWER_SPACING_MS);
      const t0 = performance.now();
      const reply = await rig.send(kind, 'PUT', `/v1/nodes/${rig.uuid}/states/power`, { target: on ? 'power on' : 'power off' });
      lastEnd = performance.now();
      if (rig.expect(`${kind} power PUT`, reply, 202)) {
        on = !on;
        if (i >= sizes.gatewayWarmup) samples[kind].push(lastEnd - t0);
      }
    }
  }
  return { direct: percentiles(samples.direct), gateway: percentiles(samples.gateway) };
}

/** `gatewayClients` concurrent clients: bursts of GETs, one per kind and round, the kinds' order alternating. */
async function measureThroughput(rig: Rig, sizes: Sample): Promise<GatewayLatencyResult['throughput']> {
  const busy: Record<Kind, number> = { direct: 0, gateway: 0 };
  for (let round = 0; round < sizes.gatewayRounds; round++) {
    for (const kind of order(round)) {
      let left = sizes.gatewayBurst;
      const t0 = performance.now();
      const client = async () => {
        while (left-- > 0) rig.expect(`${kind} GET (concurrent)`, await rig.send(kind, 'GET', `/v1/nodes/${rig.uuid}`), 200);
      };
      await Promise.all(Array.from({ length: sizes.gatewayClients }, client));
      busy[kind] += performance.now() - t0;
    }
  }
  const requests = sizes.gatewayRounds * sizes.gatewayBurst;
  return { clients: sizes.gatewayClients, requests, direct: (requests * 1000) / busy.direct, gateway: (requests * 1000) / busy.gateway };
}

/** Direct first on even rounds, the gateway first on odd ones: drift and "who goes second" cancel out. */
const order = (i: number): readonly Kind[] => (i % 2 === 0 ? ['direct', 'gateway'] : ['gateway', 'direct']);

/**
 * One HTTP call the way a client makes it: Node's fetch (undici, keep-alive connection pool per origin) for both
 * sides, the same microversion header, the body read to the end.
 */
async function call(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<Reply> {
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

/** Nearest-rank percentiles in ms. */
export function percentiles(samples: readonly number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  const rank = (p: number) => (n === 0 ? NaN : sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))]!);
  const mean = n === 0 ? NaN : sorted.reduce((s, x) => s + x, 0) / n;
  return { n, p50: rank(50), p95: rank(95), p99: rank(99), mean, max: n === 0 ? NaN : sorted[n - 1]! };
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(20);
  }
}

/** Waits until `notBefore` (performance.now() time) and until Ironic holds no lock and no pending power change. */
async function idle(rig: Rig, notBefore: number): Promise<void> {
  if (notBefore > performance.now()) await sleep(notBefore - performance.now());
  const settled = async () => {
    const node = JSON.parse((await rig.ironic('GET', `/v1/nodes/${rig.uuid}?fields=reservation,target_power_state`)).text);
    return node.reservation === null && node.target_power_state === null;
  };
  await until(settled, 30_000, `node ${rig.uuid} idle`);
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

/** Starts Ironic on a free port (a port taken meanwhile: another try); its stop is pushed onto `cleanups`. */
async function startIronic(cleanups: Array<() => Promise<void>>): Promise<string> {
  let last = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const dataDir = mkdtempSync(join(tmpdir(), DATA_DIR_PREFIX));
    writeFileSync(join(dataDir, 'owner.pid'), `${process.pid}\n`);
    const stop = async () => {
      await runScript(['stop', dataDir], 60_000);
      rmSync(dataDir, { recursive: true, force: true });
    };
    const res = await runScript(['start', dataDir, '--port', String(await freePort()), '--auth', 'noauth'], 120_000);
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

async function ironicVersion(url: string): Promise<string> {
  const root = JSON.parse((await call(`${url}/`, 'GET', {})).text) as { versions?: Array<{ version?: string }> };
  const api = root.versions?.[0]?.version ?? '?';
  const pkg = await new Promise<string>((resolve) =>
    execFile('dpkg-query', ['-W', '-f=${Version}', 'python3-ironic'], (err, stdout) => resolve(err ? '?' : String(stdout).trim())),
  );
  return `Ironic ${pkg.replace(/^\d+:/, '')} (API up to ${api})`;
}

// ------------------------------------------------------------------------------------------------ Leasehold

/**
 * `leasehold serve` as its own process against the Ironic, with a throwaway data dir (embedded PGlite) and the
 * default log level (info: one access log line per request, as deployed). Sync and reconcile every 10 min instead
 * of 60 s / 30 s: their full-inventory reads are periodic background work, not a cost of the call measured, and
 * would otherwise land in a few samples of either kind.
 */
async function startLeasehold(ironicUrl: string, cleanups: Array<() => Promise<void>>): Promise<{ url: string; proc: ChildProcess }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'leasehold-bench-gateway-'));
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? tmpdir(),
    LEASEHOLD_DRIVER: 'ironic',
    IRONIC_URL: ironicUrl,
    IRONIC_AUTH_TYPE: 'none',
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
function peakRss(pid: number | undefined): number | null {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}
