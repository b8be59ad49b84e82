import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GatewayAuth } from './options.js';
import { freePort, IRONIC_SCRIPT, LEASEHOLD_BIN, ownedDataDir, PREFIX, runScript, until, type Cleanups } from './stack-processes.js';
import { sleep } from './stats.js';

/**
 * Section 4's set-up: a real standalone Ironic (scripts/ironic-standalone.sh: one process, SQLite, fake-hardware,
 * no fake delays; `noauth` or `http_basic` here, `keystone` in keystone-gateway.ts), nodes enrolled in it, the real
 * `leasehold serve` against it as its own process, and a lessee with an active lease on the first node. The
 * measuring is in gateway-latency.ts.
 */

/** Both sides send the microversion the Zed `baremetal` CLI sends; the gateway forwards the client's. */
const MICROVERSION = '1.78';
export const ADMIN_TOKEN = 'lh_bench-gateway-admin-token-0123456789abcdef';
export const OWNERS = 'gw-bench-owners';
export const LESSEES = 'gw-bench-lessees';
export const NODES = 3;
/** The http_basic user; its password is random per run (the script stores it bcrypt-hashed, cost 4). */
const IRONIC_USER = 'leasehold-bench';

export const IRONIC_MISSING = 'skipped: no Ironic (scripts/ironic-standalone.sh install)';

export type Reply = { readonly status: number; readonly text: string };
export type Call = (method: string, path: string, body?: unknown) => Promise<Reply>;
export type { Cleanups } from './stack-processes.js';

/** What section 4 measures against: Ironic called directly (with its credentials, if any) and the gateway. */
export interface GatewayStack {
  readonly ironicUrl: string;
  /**
   * A call straight to Ironic for the set-up and the idle checks: no credentials under noauth, `Authorization:
   * Basic` under http_basic, Ironic's service user's token under keystone.
   */
  readonly ironic: Call;
  /** The measured direct calls: the node GET and the power PUT (under keystone, with users' tokens). */
  readonly direct: { readonly get: Call; readonly power: Call };
  /** Who makes the direct calls when it is not simply "with Ironic's credentials" (under keystone). */
  readonly directAs: { readonly get: string; readonly power: string } | null;
  /** The leased node's Ironic UUID. */
  readonly uuid: string;
  readonly serverUrl: string;
  readonly serverPid: number | undefined;
  readonly lesseeToken: string;
  /** Under keystone: a token the lessee has never used, and a direct call with a given token (first-call figures). */
  readonly cold: { readonly newToken: () => Promise<string>; readonly directWith: (token: string) => Call } | null;
  /** What else ran behind (Keystone's version), or null. */
  readonly extra: string | null;
}

export const ironicInstalled = (): boolean => ['/usr/bin/ironic', '/usr/bin/ironic-dbsync', IRONIC_SCRIPT].every((f) => existsSync(f));

/**
 * Starts everything for the `noauth` or `http_basic` variant; each stop is pushed onto `cleanups` (the caller runs
 * them, last first).
 */
export async function startGatewayStack(auth: Exclude<GatewayAuth, 'keystone'>, cleanups: Cleanups, progress: (message: string) => void): Promise<GatewayStack> {
  const credentials = auth === 'http_basic' ? { user: IRONIC_USER, password: randomBytes(18).toString('base64url') } : null;
  const ironicUrl = await startIronic(
    credentials ? ['--auth', 'http_basic', '--user', credentials.user, '--password', credentials.password] : ['--auth', 'noauth'],
    cleanups,
  );
  const authHeader: Record<string, string> = credentials
    ? { Authorization: `Basic ${Buffer.from(`${credentials.user}:${credentials.password}`).toString('base64')}` }
    : {};
  const ironic: Call = (method, path, body) => call(`${ironicUrl}${path}`, method, authHeader, body);
  const uuids = await Promise.all(Array.from({ length: NODES }, (_, i) => enrol(ironic, `gw-bench-${i}`, OWNERS)));
  progress(`4 [${auth}]: Ironic at ${ironicUrl}, ${NODES} nodes enrolled; starting leasehold serve`);
  const server = await startLeasehold(
    {
      IRONIC_URL: ironicUrl,
      ...(credentials
        ? { IRONIC_AUTH_TYPE: 'http_basic', IRONIC_USERNAME: credentials.user, IRONIC_PASSWORD: credentials.password }
        : { IRONIC_AUTH_TYPE: 'none' }),
      LEASEHOLD_ADMIN_TOKEN: ADMIN_TOKEN,
    },
    cleanups,
  );
  const owner = await localMember(server.url, OWNERS);
  const lessee = await localMember(server.url, LESSEES);
  const projectId = await offerAndLease(server.url, owner.token, lessee.token);
  const uuid = uuids[0]!;
  await lesseeInIronic(ironic, uuid, projectId);
  return {
    ironicUrl,
    ironic,
    direct: { get: ironic, power: ironic },
    directAs: null,
    uuid,
    serverUrl: server.url,
    serverPid: server.proc.pid,
    lesseeToken: lessee.token,
    cold: null,
    extra: null,
  };
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

/** The engine hands the node over by PATCHing Ironic's lessee: wait for it, so it does not land in a sample. */
export async function lesseeInIronic(ironic: Call, uuid: string, projectId: string): Promise<void> {
  await until(async () => JSON.parse((await ironic('GET', `/v1/nodes/${uuid}?fields=lessee`)).text).lessee === projectId, 30_000, 'lessee set in Ironic');
}

// ------------------------------------------------------------------------------------------------ Ironic

/**
 * Starts Ironic on a free port (a port taken meanwhile: another try) with `authArgs` (`--auth …`); its stop is
 * pushed onto `cleanups`. The data dir's prefix and owner.pid are what test/support/ironic.ts's reaper looks for.
 */
export async function startIronic(authArgs: readonly string[], cleanups: Cleanups): Promise<string> {
  let last = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const dataDir = ownedDataDir(PREFIX.ironic);
    const stop = async () => {
      await runScript(IRONIC_SCRIPT, ['stop', dataDir], 60_000);
      rmSync(dataDir, { recursive: true, force: true });
    };
    cleanups.push(stop); // before the start: a signal meanwhile stops what the script started so far
    const res = await runScript(IRONIC_SCRIPT, ['start', dataDir, '--port', String(await freePort()), ...authArgs], 120_000);
    const url = res.stdout.trim().split('\n').pop() ?? '';
    if (res.code === 0 && url.startsWith('http://')) return url;
    last = `ironic-standalone.sh start failed (${res.code}):\n${res.stderr.slice(-4000)}`;
    cleanups.splice(cleanups.indexOf(stop), 1);
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

/**
 * A fake-hardware node brought to `available` the way an operator enrols one: manage, power off, `owner` (a
 * project's name, or under Keystone its id), provide.
 */
export async function enrol(ironic: Call, name: string, owner: string): Promise<string> {
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
  await ironicOk(ironic, 'PATCH', `/v1/nodes/${uuid}`, [{ op: 'add', path: '/owner', value: owner }]);
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
 * `leasehold serve` as its own process with `env` (how it reaches Ironic, its identity), a throwaway data dir
 * (embedded PGlite; owner.pid and server.pid for stack-processes.ts's reaper) and the default log level (info: one
 * access log line per request, as deployed). Sync and reconcile every 10 min instead of 60 s / 30 s: their
 * full-inventory reads are periodic background work, not a cost of the call measured, and would otherwise land in
 * a few samples of either kind.
 */
export async function startLeasehold(env: Record<string, string>, cleanups: Cleanups): Promise<{ url: string; proc: ChildProcess }> {
  const dataDir = ownedDataDir(PREFIX.server);
  const fullEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? tmpdir(),
    LEASEHOLD_DRIVER: 'ironic',
    ...env,
    LEASEHOLD_DATA_DIR: dataDir,
    LEASEHOLD_CLEANING_GAP: '0s',
    LEASEHOLD_SYNC_INTERVAL: '10m',
    LEASEHOLD_RECONCILE_INTERVAL: '10m',
  };
  const proc = spawn(process.execPath, [LEASEHOLD_BIN, 'serve', '--port', '0'], { env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  if (proc.pid) writeFileSync(join(dataDir, 'server.pid'), `${proc.pid}\n`);
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

/** Through Leasehold's REST API: a call with `token` (Bearer: a Leasehold token, or under Keystone a Keystone one). */
export async function api(url: string, token: string, method: string, path: string, body?: unknown): Promise<any> {
  const reply = await call(`${url}${path}`, method, { authorization: `Bearer ${token}` }, body);
  if (reply.status >= 300) throw new Error(`Leasehold ${method} ${path} → ${reply.status}: ${reply.text.slice(0, 500)}`);
  return JSON.parse(reply.text);
}

/** Under local identity: a project (the nodes' Ironic owner is its name) and a member with a token, by the admin. */
export async function localMember(url: string, projectName: string): Promise<{ projectId: string; token: string }> {
  const project = await api(url, ADMIN_TOKEN, 'POST', '/v1/projects', { name: projectName });
  const user = await api(url, ADMIN_TOKEN, 'POST', '/v1/users', { name: `${projectName}-member`, project_id: project.id, role: 'member' });
  return { projectId: project.id as string, token: (await api(url, ADMIN_TOKEN, 'POST', '/v1/tokens', { user_id: user.id })).token as string };
}

/**
 * As Leasehold's users would: the owner's member offers the first node, the lessee's member leases it for two hours.
 * Resolves to the lessee's project id (what the engine sets as the node's Ironic lessee).
 */
export async function offerAndLease(url: string, ownerToken: string, lesseeToken: string): Promise<string> {
  await api(url, ownerToken, 'POST', '/v1/offers', { node_id: 'gw-bench-0', max_lease_duration: '1d' });
  const lease = await api(url, lesseeToken, 'POST', '/v1/leases', { nodes: ['gw-bench-0'], duration: '2h' });
  return lease.project_id as string;
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
