/**
 * A real, standalone OpenStack Ironic for integration tests (fake-hardware driver, SQLite, one process), driven
 * by the project's own scripts/ironic-standalone.sh. Facts behind it: shared/notes/ironic-standalone.md.
 *
 *   const avail = ironicAvailable();
 *   describe.skipIf(!avail.ok)('against a real Ironic', () => {
 *     let ironic: IronicHandle;
 *     beforeAll(async () => { ironic = await startIronic(); }, 180_000);
 *     afterAll(() => ironic?.stop());
 *     ...
 *   });
 *
 * Outside CI a missing Ironic skips (with the reason printed loudly); under CI (`process.env.CI` set) it is an
 * error: ironicAvailable() and startIronic() throw instead.
 *
 * An Ironic behind Keystone (auth_strategy = keystone) comes from test/support/keystone.ts's
 * startIronicWithKeystone(), which creates its service user and passes `auth: 'keystone'` with `keystone` here.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ownedInstances } from './owned-instances.js';
import { announceUnavailable, onceInstaller, scriptRunner } from './standalone-script.js';

export const IRONIC_SCRIPT = fileURLToPath(new URL('../../scripts/ironic-standalone.sh', import.meta.url));

/** The microversion every request sends unless told otherwise (the highest the Zed client speaks). */
export const IRONIC_API_VERSION = '1.78';

/** What a test needs on disk: the packaged binaries this project starts or calls. */
const REQUIRED_BINARIES = ['/usr/bin/ironic', '/usr/bin/ironic-dbsync', '/usr/bin/baremetal', '/usr/bin/socat'];

/** Every interface a fake-hardware node is created with. */
export const FAKE_INTERFACES = {
  bios_interface: 'fake',
  boot_interface: 'fake',
  console_interface: 'fake',
  deploy_interface: 'fake',
  inspect_interface: 'fake',
  management_interface: 'fake',
  network_interface: 'noop',
  power_interface: 'fake',
  raid_interface: 'fake',
  rescue_interface: 'fake',
  storage_interface: 'noop',
  vendor_interface: 'fake',
} as const;

export type IronicAvailability = { ok: true } | { ok: false; reason: string };

export interface IronicNodeSpec {
  name: string;
  /** Ironic picks one when absent. */
  uuid?: string;
  properties: Record<string, unknown>;
  traits?: string[];
  owner?: string;
  lessee?: string;
  resource_class?: string;
  /** Overrides of FAKE_INTERFACES, e.g. `{ console_interface: 'ipmitool-socat' }`. */
  interfaces?: Partial<Record<keyof typeof FAKE_INTERFACES, string>>;
  driver_info?: Record<string, unknown>;
}

export interface IronicRequestOptions {
  /** Microversion header; defaults to IRONIC_API_VERSION. */
  version?: string;
  /** Send no Authorization header even under http_basic (no X-Auth-Token under keystone). */
  noAuth?: boolean;
  /** Under keystone: this Keystone token (a user's) instead of the service user's. */
  token?: string;
  /** Statuses to return instead of throwing (default: any 2xx is fine, anything else throws). */
  expect?: number[];
}

export interface IronicResponse<T = any> {
  status: number;
  body: T;
}

export interface IronicNode {
  uuid: string;
  name: string | null;
  provision_state: string;
  target_provision_state: string | null;
  power_state: string | null;
  target_power_state: string | null;
  last_error: string | null;
  owner: string | null;
  lessee: string | null;
  reservation: string | null;
  [key: string]: unknown;
}

export interface IronicTimings {
  /** Time `install` took in this process; 0 when the packages were there already. */
  installMs: number;
  /** `start` until GET /v1/drivers listed fake-hardware. */
  startMs: number;
}

export interface IronicHandle {
  readonly url: string;
  readonly dataDir: string;
  /** Under http_basic: the user Leasehold and the tests authenticate as. */
  readonly auth?: { user: string; password: string };
  /** Under keystone: the service user Ironic validates tokens as (requests go with its token unless told). */
  readonly keystone?: IronicKeystoneAuth;
  readonly timings: IronicTimings;
  /** Stops Ironic (and console socats) and removes the data dir; idempotent. */
  stop(): Promise<void>;
  /**
   * Stops the Ironic process but keeps its data dir (database, configuration): Ironic is down until restart().
   * Resolves once the process is gone (SIGTERM, ≈ 2 s).
   */
  halt(): Promise<void>;
  /**
   * Starts the same Ironic again: the same data dir (so the same database and nodes), port, auth and fake delays.
   * Halts it first if it is running. Resolves when the conductor is ready; the new start time is in timings.
   */
  restart(): Promise<void>;
  /** Creates fake-hardware nodes and brings each to `available`; resolves to their uuids, in order. */
  enroll(nodes: IronicNodeSpec[], opts?: EnrollOptions): Promise<string[]>;
  /** One REST call: JSON in and out, microversion and auth headers set, `409 … locked` retried with backoff. */
  request<T = any>(method: string, path: string, body?: unknown, opts?: IronicRequestOptions): Promise<IronicResponse<T>>;
  getNode(id: string): Promise<IronicNode>;
  /** Polls the node until `done(node)`; throws on timeout or when `fail(node)` (default: a `* failed` state). */
  waitForNode(id: string, done: (n: IronicNode) => boolean, opts?: WaitOptions): Promise<IronicNode>;
  /** PUT /v1/nodes/{id}/states/provision (with 409-locked retries). */
  setProvisionState(id: string, target: string, extra?: Record<string, unknown>): Promise<void>;
  /** PUT /v1/nodes/{id}/states/power (with 409-locked retries). */
  setPowerState(id: string, target: string): Promise<void>;
}

export interface EnrollOptions {
  /**
   * Create each node straight into `available`, as API microversions up to 1.10 did (no manage, no cleaning),
   * then power it off and set traits, owner and lessee: ≈ 3× faster for hundreds of nodes whose enrolment is
   * not what a test looks at. Not with `interfaces` (1.10 knows no interface fields; the defaults are fake).
   */
  quick?: boolean;
}

export interface WaitOptions {
  timeoutMs?: number;
  fail?: (n: IronicNode) => boolean;
  what?: string;
}

// ------------------------------------------------------------------------------------------------ availability

let availability: IronicAvailability | undefined;

function computeAvailability(): IronicAvailability {
  if (process.platform !== 'linux') return { ok: false, reason: `Ironic tests need Linux (this is ${process.platform})` };
  if (!existsSync(IRONIC_SCRIPT)) return { ok: false, reason: `missing ${IRONIC_SCRIPT}` };
  if (REQUIRED_BINARIES.every((b) => existsSync(b))) return { ok: true };
  const missing = REQUIRED_BINARIES.filter((b) => !existsSync(b)).join(', ');
  if (!existsSync('/usr/bin/apt-get') || !existsSync('/usr/bin/dpkg-query')) {
    return { ok: false, reason: `Ironic is not installed (${missing} missing) and there is no apt-get to install it` };
  }
  if (process.getuid?.() !== 0) {
    return {
      ok: false,
      reason: `Ironic is not installed (${missing} missing) and installing needs root: run 'sudo ${IRONIC_SCRIPT} install'`,
    };
  }
  return { ok: true }; // installable: startIronic() installs it
}

/**
 * Whether startIronic() can work here: the packages are installed, or installable (root with apt-get).
 * Under CI an unavailable Ironic is an error, never a skip: this throws.
 */
export function ironicAvailable(): IronicAvailability {
  availability ??= computeAvailability();
  announceUnavailable('Ironic', availability);
  return availability;
}

// ------------------------------------------------------------------------------------------------ the script

const runScript = scriptRunner(IRONIC_SCRIPT);

/** Installs the packages once per process (a no-op when present); resolves to the milliseconds it took. */
export const ensureIronicInstalled = onceInstaller('ironic-standalone.sh', runScript, REQUIRED_BINARIES);

/** A port the kernel just handed out for 127.0.0.1 (free a moment ago; start retries if it was taken). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => (port ? resolve(port) : reject(new Error('no port'))));
    });
  });
}

// Ironic runs in its own session (setsid): make sure a crashed test process does not leave it behind.
const instances = ownedInstances({
  prefix: 'leasehold-ironic-',
  pidFile: 'ironic.pid',
  label: 'Ironic',
  stop: (dir) => runScript(['stop', dir], 60_000),
});

/**
 * Stops Ironics that earlier test processes started and could not stop (killed by a timeout, SIGKILL); instances
 * of live test processes (other workers, other runs) are left alone.
 */
export function reapStaleIronics(): Promise<void> {
  return instances.reap();
}

// ------------------------------------------------------------------------------------------------ start

/** Ironic in auth_strategy = keystone: its keystone_authtoken user (admin + service on `project`). */
export interface IronicKeystoneAuth {
  /** Keystone's v3 root, e.g. http://127.0.0.1:5000/v3. */
  readonly url: string;
  readonly user: string;
  readonly password: string;
  /** Default `service`. */
  readonly project?: string;
  /** A valid token of that user (the handle's requests carry it): cached and renewed by the caller. */
  readonly token: () => Promise<string>;
}

/** The `neutron` network interface (test/support/neutron.ts): Ironic talks to Neutron as the `keystone` user. */
export interface IronicNeutronOptions {
  /** The cleaning and provisioning network (name or uuid); it must exist in Neutron before a node is cleaned. */
  readonly network: string;
  /** Which catalog endpoint of type `network` Ironic uses; default public. */
  readonly interface?: 'public' | 'internal';
  /** Neutron's URL, bypassing the catalog. */
  readonly url?: string;
}

export interface StartIronicOptions {
  /** `keystone` needs `keystone` (test/support/keystone.ts's startIronicWithKeystone() fills it). */
  auth?: 'noauth' | 'http_basic' | 'keystone';
  keystone?: IronicKeystoneAuth;
  /** Enables the `neutron` network interface (beside noop, still the default); needs `keystone` for its credentials. */
  neutron?: IronicNeutronOptions;
  /** Default: a free port. */
  port?: number;
  /** `[fake]` delays, e.g. 'power_delay=0.1,deploy_delay=0.5,1'. */
  fakeDelays?: string;
  user?: string;
  password?: string;
}

export async function startIronic(options: StartIronicOptions = {}): Promise<IronicHandle> {
  const avail = ironicAvailable();
  if (!avail.ok) throw new Error(`cannot start Ironic: ${avail.reason}`);
  const installMs = await ensureIronicInstalled();
  await reapStaleIronics();

  const authMode = options.auth ?? 'noauth';
  const keystone = authMode === 'keystone' ? options.keystone : undefined;
  if (authMode === 'keystone' && !keystone) throw new Error("startIronic: auth 'keystone' needs the keystone option");
  const neutron = options.neutron;
  if (neutron && !options.keystone) throw new Error('startIronic: neutron needs the keystone option (its credentials)');
  const serviceUser = keystone ?? (neutron ? options.keystone : undefined);
  const auth =
    authMode === 'http_basic'
      ? { user: options.user ?? 'leasehold', password: options.password ?? randomBytes(12).toString('base64url') }
      : undefined;

  let lastError = '';
  for (let attempt = 0; attempt < (options.port ? 1 : 3); attempt++) {
    const port = options.port ?? (await freePort());
    const dataDir = instances.create();
    const args = ['start', dataDir, '--port', String(port), '--auth', authMode];
    if (auth) args.push('--user', auth.user, '--password', auth.password);
    if (serviceUser) {
      // The password goes through the environment ($IRONIC_KEYSTONE_PASSWORD): command lines are visible to all.
      args.push('--keystone-url', serviceUser.url, '--keystone-user', serviceUser.user);
      if (serviceUser.project) args.push('--keystone-project', serviceUser.project);
    }
    if (neutron) {
      args.push('--neutron-network', neutron.network);
      if (neutron.interface) args.push('--neutron-interface', neutron.interface);
      if (neutron.url) args.push('--neutron-url', neutron.url);
    }
    const env: Record<string, string> = serviceUser ? { IRONIC_KEYSTONE_PASSWORD: serviceUser.password } : {};
    if (options.fakeDelays) args.push('--fake-delays', options.fakeDelays);
    const t0 = performance.now();
    instances.started(dataDir);
    const res = await runScript(args, 120_000, env);
    const startMs = Math.round(performance.now() - t0);
    const url = res.stdout.trim().split('\n').pop() ?? '';
    if (res.code === 0 && url.startsWith('http://')) {
      return makeHandle({ url, dataDir, auth, keystone, timings: { installMs, startMs }, startArgs: args, startEnv: env });
    }
    lastError = `ironic-standalone.sh start (port ${port}) failed (${res.code}):\n${res.stderr.slice(-6000)}`;
    await runScript(['stop', dataDir], 30_000);
    instances.stopped(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  }
  throw new Error(lastError);
}

// ------------------------------------------------------------------------------------------------ REST

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function isLocked(status: number, body: unknown): boolean {
  return status === 409 && /locked/i.test(typeof body === 'string' ? body : JSON.stringify(body ?? ''));
}

function errorText(body: unknown): string {
  // Ironic wraps errors as {"error_message": "{\"faultstring\": ...}"}.
  if (body && typeof body === 'object' && 'error_message' in body) {
    const msg = (body as { error_message: unknown }).error_message;
    if (typeof msg === 'string') {
      try {
        return (JSON.parse(msg) as { faultstring?: string }).faultstring ?? msg;
      } catch {
        return msg;
      }
    }
  }
  return typeof body === 'string' ? body : JSON.stringify(body);
}

const FAILED_STATES = /failed$/;
/** Parallel clients while enrolling: one Ironic process does ≈ 20-30 state changes/s. */
const ENROLL_CLIENTS = 8;
/** Up to this many nodes, each is enrolled start to finish by one client; more go step by step for all at once. */
const ENROLL_ONE_BY_ONE_MAX = 16;

function makeHandle(init: {
  url: string;
  dataDir: string;
  auth: { user: string; password: string } | undefined;
  keystone: IronicKeystoneAuth | undefined;
  timings: IronicTimings;
  /** The `start` arguments it was started with: restart() runs them again on the same data dir. */
  startArgs: string[];
  /** And its environment (the service user's password). */
  startEnv: Record<string, string>;
}): IronicHandle {
  const { url, dataDir, auth, keystone, startArgs, startEnv } = init;
  const timings = { ...init.timings };
  let stopped: Promise<void> | undefined;

  async function request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    opts: IronicRequestOptions = {},
  ): Promise<IronicResponse<T>> {
    const headers: Record<string, string> = {
      'X-OpenStack-Ironic-API-Version': opts.version ?? IRONIC_API_VERSION,
      Accept: 'application/json',
    };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (auth && !opts.noAuth) {
      headers.Authorization = `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}`;
    }
    if (keystone && !opts.noAuth) headers['X-Auth-Token'] = opts.token ?? (await keystone.token());
    const deadline = Date.now() + 30_000;
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(url + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // not JSON
      }
      if (isLocked(res.status, parsed) && Date.now() < deadline) {
        await sleep(Math.min(50 * 2 ** attempt, 1000) * (0.5 + Math.random()));
        continue;
      }
      if (opts.expect ? !opts.expect.includes(res.status) : res.status < 200 || res.status >= 300) {
        throw new Error(`Ironic ${method} ${path} → ${res.status}: ${errorText(parsed)}`);
      }
      return { status: res.status, body: parsed as T };
    }
  }

  const getNode = async (id: string) => (await request<IronicNode>('GET', `/v1/nodes/${id}`)).body;

  async function waitForNode(id: string, done: (n: IronicNode) => boolean, opts: WaitOptions = {}): Promise<IronicNode> {
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const fail = opts.fail ?? ((n: IronicNode) => FAILED_STATES.test(n.provision_state));
    const deadline = Date.now() + timeoutMs;
    let node = await getNode(id);
    for (let delay = 20; ; delay = Math.min(delay * 1.5, 250)) {
      if (done(node)) return node;
      if (fail(node)) {
        throw new Error(
          `node ${node.name ?? id} ${node.provision_state} while waiting for ${opts.what ?? 'a state'}: ${node.last_error}`,
        );
      }
      if (Date.now() > deadline) {
        throw new Error(
          `node ${node.name ?? id} not ${opts.what ?? 'ready'} after ${timeoutMs} ms: provision ${node.provision_state}` +
            ` → ${node.target_provision_state}, power ${node.power_state} → ${node.target_power_state}, last_error ${node.last_error}`,
        );
      }
      await sleep(delay);
      node = await getNode(id);
    }
  }

  const setProvisionState = async (id: string, target: string, extra: Record<string, unknown> = {}) => {
    await request('PUT', `/v1/nodes/${id}/states/provision`, { target, ...extra });
  };
  const setPowerState = async (id: string, target: string) => {
    await request('PUT', `/v1/nodes/${id}/states/power`, { target });
  };

  async function halt(): Promise<void> {
    if (stopped) throw new Error('this Ironic was stopped for good (stop()); it cannot be halted');
    const res = await runScript(['stop', dataDir], 60_000);
    if (res.code !== 0) throw new Error(`ironic-standalone.sh stop failed (${res.code}):\n${res.stderr}`);
  }

  async function restart(): Promise<void> {
    if (stopped) throw new Error('this Ironic was stopped for good (stop()); it cannot be restarted');
    if ((await runScript(['status', dataDir], 30_000)).code === 0) await halt();
    const t0 = performance.now();
    // The same data dir: the schema exists, so `start` skips creating it and serves the same database.
    const res = await runScript(startArgs, 120_000, startEnv);
    const restartedUrl = res.stdout.trim().split('\n').pop() ?? '';
    if (res.code !== 0 || restartedUrl !== url) {
      throw new Error(`ironic-standalone.sh start (restart on ${url}) failed (${res.code}):\n${res.stderr.slice(-6000)}`);
    }
    timings.startMs = Math.round(performance.now() - t0);
  }

  async function enrollOne(spec: IronicNodeSpec): Promise<string> {
    const created = await request<IronicNode>('POST', '/v1/nodes', {
      name: spec.name,
      ...(spec.uuid ? { uuid: spec.uuid } : {}),
      driver: 'fake-hardware',
      ...FAKE_INTERFACES,
      ...spec.interfaces,
      properties: spec.properties,
      ...(spec.resource_class ? { resource_class: spec.resource_class } : {}),
      ...(spec.driver_info ? { driver_info: spec.driver_info } : {}),
    });
    const id = created.body.uuid;

    await setProvisionState(id, 'manage');
    await waitForNode(id, (n) => n.provision_state === 'manageable' && !n.target_provision_state, {
      what: 'manageable',
    });
    // Fake nodes start with power_state null, and allocations skip such nodes: power off once.
    await setPowerState(id, 'power off');
    await waitForNode(id, (n) => n.power_state === 'power off' && !n.target_power_state, { what: 'power off' });

    if (spec.traits?.length) await request('PUT', `/v1/nodes/${id}/traits`, { traits: spec.traits });
    const patch: Array<{ op: 'add'; path: string; value: string }> = [];
    if (spec.owner) patch.push({ op: 'add', path: '/owner', value: spec.owner });
    if (spec.lessee) patch.push({ op: 'add', path: '/lessee', value: spec.lessee });
    if (patch.length) await request('PATCH', `/v1/nodes/${id}`, patch);

    await setProvisionState(id, 'provide'); // manageable → cleaning → available (automated_clean = true)
    await waitForNode(id, (n) => n.provision_state === 'available' && !n.target_provision_state, {
      what: 'available',
    });
    return id;
  }

  /** Runs `task` over `items`, `ENROLL_CLIENTS` at a time; results in order. */
  async function parallel<T, R>(items: readonly T[], task: (item: T, i: number) => Promise<R>): Promise<R[]> {
    const out: R[] = new Array(items.length);
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await task(items[i]!, i);
      }
    };
    await Promise.all(Array.from({ length: Math.min(ENROLL_CLIENTS, items.length) }, worker));
    return out;
  }

  function enrollOneByOne(nodes: IronicNodeSpec[]): Promise<string[]> {
    return parallel(nodes, (spec) => enrollOne(spec));
  }

  /**
   * Many nodes: each step for every node, then one wait for all of them, watched through the node list (one
   * request per look instead of one per node), so Ironic spends its time on the state changes.
   */
  async function enrollInPhases(nodes: IronicNodeSpec[], quick: boolean): Promise<string[]> {
    const ids = await parallel(nodes, async (spec) => {
      const created = await request<IronicNode>(
        'POST',
        '/v1/nodes',
        {
          name: spec.name,
          ...(spec.uuid ? { uuid: spec.uuid } : {}),
          driver: 'fake-hardware',
          ...(quick ? {} : { ...FAKE_INTERFACES, ...spec.interfaces }),
          properties: spec.properties,
          ...(spec.resource_class && !quick ? { resource_class: spec.resource_class } : {}),
          ...(spec.driver_info ? { driver_info: spec.driver_info } : {}),
        },
        // Up to 1.10 a new node starts `available` (later ones: `enroll`); resource_class (1.21) is set below.
        quick ? { version: '1.10' } : {},
      );
      return created.body.uuid;
    });
    if (!quick) {
      await parallel(ids, (id) => setProvisionState(id, 'manage'));
      await waitForAll(ids, (n) => n.provision_state === 'manageable' && !n.target_provision_state, 'manageable');
    }
    await parallel(ids, (id) => setPowerState(id, 'power off'));
    await waitForAll(ids, (n) => n.power_state === 'power off' && !n.target_power_state, 'power off');
    await parallel(nodes, async (spec, i) => {
      const id = ids[i]!;
      if (spec.traits?.length) await request('PUT', `/v1/nodes/${id}/traits`, { traits: spec.traits });
      const patch: Array<{ op: 'add'; path: string; value: string }> = [];
      if (spec.owner) patch.push({ op: 'add', path: '/owner', value: spec.owner });
      if (spec.lessee) patch.push({ op: 'add', path: '/lessee', value: spec.lessee });
      if (quick && spec.resource_class) patch.push({ op: 'add', path: '/resource_class', value: spec.resource_class });
      if (patch.length) await request('PATCH', `/v1/nodes/${id}`, patch);
    });
    if (!quick) await parallel(ids, (id) => setProvisionState(id, 'provide'));
    await waitForAll(ids, (n) => n.provision_state === 'available' && !n.target_provision_state, 'available');
    return ids;
  }

  /** Polls the node list until every node in `ids` is `done`; a `* failed` state or the timeout throws. */
  async function waitForAll(ids: readonly string[], done: (n: IronicNode) => boolean, what: string, timeoutMs = 300_000): Promise<void> {
    const pending = new Set(ids);
    const deadline = Date.now() + timeoutMs;
    const fields = 'uuid,name,provision_state,target_provision_state,power_state,target_power_state,last_error,reservation';
    for (;;) {
      let marker: string | null = null;
      do {
        const page: IronicResponse<{ nodes: IronicNode[]; next?: string }> = await request(
          'GET',
          `/v1/nodes?limit=1000&fields=${fields}${marker ? `&marker=${marker}` : ''}`,
        );
        for (const n of page.body.nodes) {
          if (!pending.has(n.uuid)) continue;
          if (done(n)) pending.delete(n.uuid);
          else if (FAILED_STATES.test(n.provision_state)) {
            throw new Error(`node ${n.name ?? n.uuid} ${n.provision_state} while enrolling (waiting for ${what}): ${n.last_error}`);
          }
        }
        marker = page.body.next ? new URL(page.body.next, url).searchParams.get('marker') : null;
      } while (marker);
      if (pending.size === 0) return;
      if (Date.now() > deadline) throw new Error(`${pending.size} of ${ids.length} nodes not ${what} after ${timeoutMs} ms`);
      await sleep(250);
    }
  }

  return {
    url,
    dataDir,
    ...(auth ? { auth } : {}),
    ...(keystone ? { keystone } : {}),
    timings,
    request,
    getNode,
    waitForNode,
    setProvisionState,
    setPowerState,
    async enroll(nodes, opts = {}) {
      if (opts.quick && nodes.some((n) => n.interfaces)) throw new Error('enroll: quick does not take interfaces');
      return opts.quick || nodes.length > ENROLL_ONE_BY_ONE_MAX ? enrollInPhases(nodes, opts.quick ?? false) : enrollOneByOne(nodes);
    },
    halt,
    restart,
    stop() {
      stopped ??= (async () => {
        const res = await runScript(['stop', dataDir], 60_000);
        instances.stopped(dataDir);
        if (res.code !== 0) throw new Error(`ironic-standalone.sh stop failed (${res.code}):\n${res.stderr}`);
        if (!process.env.LEASEHOLD_KEEP_IRONIC) rmSync(dataDir, { recursive: true, force: true });
      })();
      return stopped;
    },
  };
}
