import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { EntryDeps } from '../../src/access/entry-deps.js';
import type { KeystoneSignIn } from '../../src/access/keystone-sign-in.js';
import type { AppEnv } from '../../src/api/context.js';
import type { ConsoleProxy, ConsoleProxyOptions } from '../../src/console/console-proxy.js';
import type { Clock } from '../../src/domain/clock.js';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { NodePolicy } from '../../src/domain/policy-rules/node-policy.js';
import { fromValue } from '../../src/domain/tokens.js';
import type { HardwareDriver } from '../../src/drivers/hardware-driver.js';
import { IronicDriver } from '../../src/drivers/ironic/ironic-driver.js';
import { SimulatedDriver } from '../../src/drivers/simulated/simulated-driver.js';
import type { SimulatedNodeSpec, SimulatedTimings } from '../../src/drivers/simulated/simulated-driver.js';
import type { NetworkBackend } from '../../src/drivers/network-backend.js';
import { SimulatedNetworks } from '../../src/drivers/simulated/simulated-networks.js';
import { InventorySync } from '../../src/engine/inventory-sync.js';
import { NetworkTeardown } from '../../src/engine/network-teardown.js';
import { NetworkService } from '../../src/networking/network-service.js';
import type { IdentityBackend } from '../../src/domain/identity-backend.js';
import { LocalIdentity } from '../../src/identity/local-identity.js';
import type { LeaseService } from '../../src/leasing/lease-service.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { buildHttpApp } from '../../src/server/http-app.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { callJson, overHttp, type CallOptions, type Reply } from './http.js';

export const CLEANING_GAP_MS = 10 * 60_000;
export const ADMIN_TOKEN = 'lh_test-admin-token-0123456789abcdef';
export const FAKE_BMC_PASSWORD = 'bmc-secret-do-not-leak';

export const NODE_IDS = {
  gpuSmall: '0b6a5c3e-1111-4aaa-8aaa-000000000001',
  gpuLarge: '0b6a5c3e-1111-4aaa-8aaa-000000000002',
  storage: '0b6a5c3e-1111-4aaa-8aaa-000000000003',
  compute: '0b6a5c3e-1111-4aaa-8aaa-000000000004',
  orphan: '0b6a5c3e-1111-4aaa-8aaa-000000000005',
} as const;

/** A small inventory: two physics-lab nodes (owner by name), one bio-lab node, one by project id later, one unowned. */
export function testInventory(): SimulatedNodeSpec[] {
  const bmc = { ipmi_address: '10.0.0.1', ipmi_username: 'root', ipmi_password: FAKE_BMC_PASSWORD };
  return [
    { uuid: NODE_IDS.gpuSmall, name: 'gpu-01', owner: 'physics-lab', resource_class: 'baremetal.gpu', properties: { memory_mb: 65536, cpus: 32, local_gb: 480, cpu_arch: 'x86_64', gpus: 1 }, traits: ['CUSTOM_GPU_A100'], driver_info: bmc },
    { uuid: NODE_IDS.gpuLarge, name: 'gpu-02', owner: 'physics-lab', resource_class: 'baremetal.gpu', properties: { memory_mb: 524288, cpus: 128, local_gb: 1920, cpu_arch: 'x86_64', gpus: 8 }, traits: ['CUSTOM_GPU_A100', 'CUSTOM_NVME'], driver_info: bmc },
    { uuid: NODE_IDS.storage, name: 'store-01', owner: 'bio-lab', resource_class: 'baremetal.storage', properties: { memory_mb: 16384, cpus: 8, local_gb: 4000, cpu_arch: 'x86_64', capabilities: 'boot_mode:uefi' }, driver_info: bmc },
    { uuid: NODE_IDS.compute, name: 'cpu-01', owner: null, resource_class: 'baremetal.compute', properties: { memory_mb: 32768, cpus: 16, local_gb: 240, cpu_arch: 'aarch64' }, driver_info: bmc },
    { uuid: NODE_IDS.orphan, name: 'old-01', resource_class: 'baremetal.compute', properties: { memory_mb: 8192, cpus: 4, local_gb: 100, cpu_arch: 'x86_64' }, driver_info: bmc },
  ];
}

export interface TestApp<C extends Clock = ManualClock> {
  readonly store: Store;
  /** The simulated hardware (the app's driver unless `driver` or `wrapDriver` says otherwise). */
  readonly driver: SimulatedDriver;
  readonly clock: C;
  readonly inventory: InventorySync;
  /** The HTTP app itself (`app.request(path, init, env)` for what `request` cannot say, e.g. a remote address). */
  readonly app: OpenAPIHono<AppEnv>;
  readonly deps: EntryDeps;
  readonly leasing: LeaseService;
  readonly consoles: ConsoleProxy;
  /** `http://127.0.0.1:<port>` when started with `listen`; null in-process. */
  readonly url: string | null;
  /** The network backend (the simulated networks by default), and what takes networks off nodes; null without. */
  readonly networks: NetworkBackend | null;
  readonly teardown: NetworkTeardown | null;
  /** Sends a request; `token: null` sends none; the admin token by default. */
  request(method: string, path: string, options?: CallOptions): Promise<Reply>;
  close(): Promise<void>;
}

export interface TestAppOptions<C extends Clock = ManualClock> {
  /** The simulated inventory (default testInventory()). */
  readonly nodes?: SimulatedNodeSpec[];
  /** An empty PostgreSQL database instead of in-memory PGlite (test/support/postgres.ts makes one). */
  readonly databaseUrl?: string;
  /** A store already open (and filled): used as it is, not bootstrapped, not synced, not closed (the benchmark). */
  readonly store?: Store;
  /** Default: a ManualClock at 2030-01-01T00:00:00Z. */
  readonly clock?: C;
  readonly timings?: Partial<SimulatedTimings>;
  /**
   * Other hardware for the app and the inventory alike (an IronicDriver against a fake Ironic also serves
   * /baremetal; a spy around the simulated driver).
   */
  readonly driver?: (context: { readonly clock: Clock; readonly logger: Logger; readonly sim: SimulatedDriver }) => HardwareDriver;
  /** Simulated hardware shared with another app over the same database (not closed by close()). */
  readonly sim?: SimulatedDriver;
  /** What the app uses as its driver, around the simulated one (the inventory still reads the simulated one). */
  readonly wrapDriver?: (driver: SimulatedDriver) => HardwareDriver;
  /** Serve on 127.0.0.1 (a free port) with the console's WebSocket side attached; `request` then goes over HTTP. */
  readonly listen?: boolean;
  readonly console?: { readonly tokenTtlMs?: number; readonly publicUrl?: string; readonly proxy?: Partial<ConsoleProxyOptions> };
  /** Where the JSON log lines go (debug level); none: silent. */
  readonly logTo?: NodeJS.WritableStream;
  /** Keystone for the web UI's sign-in (POST /v1/auth/tokens). */
  readonly keystone?: KeystoneSignIn;
  /** Who vouches for tokens (default: Leasehold's own users, LocalIdentity over the store). */
  readonly identity?: (context: { readonly store: Store; readonly clock: Clock; readonly logger: Logger }) => IdentityBackend;
  /**
   * The network backend (default: simulated networks, empty, cabled to the simulated nodes; `false`: none, the
   * network endpoints answer 409 not_configured).
   */
  readonly networks?: NetworkBackend | false;
  /** Who may scrape `/metrics` and where (default: open, on this app). */
  readonly metricsAccess?: { readonly token: string | null; readonly separatePort: number | null };
}

const FAST_TIMINGS: Partial<SimulatedTimings> = { powerMs: 10, cleanMs: 10, deployMs: 10, undeployMs: 10, manageMs: 10, consoleMs: 10 };

/**
 * The whole API wired as the server wires it (src/server/http-app.ts) over in-memory PGlite (or PostgreSQL, or a
 * given store), simulated hardware and a manual clock, the admin bootstrapped: in-process by default, on a real
 * socket with the serial console's WebSocket side when `listen` is set. The one harness of the tests and the
 * benchmark.
 */
export async function startApp<C extends Clock = ManualClock>(options: TestAppOptions<C> = {}): Promise<TestApp<C>> {
  const clock = (options.clock ?? new ManualClock('2030-01-01T00:00:00Z')) as C;
  const logger = options.logTo ? createLogger('debug', options.logTo) : createLogger('silent');
  const ownStore = options.store === undefined;
  const store = options.store ?? (await openStore({ dataDir: 'memory://', databaseUrl: options.databaseUrl }));
  if (ownStore) await bootstrapTestAdmin(store, clock);
  const networks = options.networks === false ? null : (options.networks ?? new SimulatedNetworks());
  const sim =
    options.sim ??
    new SimulatedDriver({
      nodes: options.nodes ?? testInventory(),
      clock,
      timings: { ...FAST_TIMINGS, ...options.timings },
      networks: networks instanceof SimulatedNetworks ? networks : undefined,
    });
  const hardware = options.driver ? options.driver({ clock, logger, sim }) : sim;
  const driver = options.wrapDriver ? options.wrapDriver(sim) : hardware;
  const teardown = networks ? new NetworkTeardown({ store, driver, networks, clock, logger }) : null;
  const inventory = new InventorySync({ driver: hardware, store, clock, logger, intervalMs: 3_600_000 });
  if (ownStore) await inventory.syncAll();
  const { app, deps, leasing, consoles } = buildHttpApp({
    store,
    identity: options.identity ? options.identity({ store, clock, logger }) : new LocalIdentity(store, clock),
    keystone: options.keystone ?? null,
    driver,
    inventory,
    clock,
    logger,
    policy: NodePolicy.defaults(),
    cleaningGapMs: CLEANING_GAP_MS,
    ironic: hardware instanceof IronicDriver ? hardware : null,
    networks: networks && teardown ? new NetworkService({ store, driver, networks, teardown, clock, logger }) : null,
    networksOff: networks ? undefined : 'tenant networks are not configured here (the test turned them off)',
    console: { tokenTtlMs: options.console?.tokenTtlMs ?? 600_000, publicUrl: options.console?.publicUrl ?? null, proxy: options.console?.proxy },
    metricsAccess: options.metricsAccess,
  });
  let server: ServerType | null = null;
  let url: string | null = null;
  if (options.listen) {
    server = await new Promise<ServerType>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    consoles.attach(server);
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  const send = url === null ? (path: string, init: RequestInit) => app.request(path, init) : overHttp(() => url!);
  return {
    store,
    driver: sim,
    clock,
    inventory,
    app,
    deps,
    leasing,
    consoles,
    url,
    networks,
    teardown,
    request: (method, path, call = {}) => callJson(send, method, path, { ...call, token: call.token === undefined ? ADMIN_TOKEN : call.token }),
    async close() {
      await consoles.close();
      if (server) {
        const closing = server;
        await new Promise<void>((resolve) => {
          closing.close(() => resolve());
          if ('closeAllConnections' in closing) closing.closeAllConnections();
        });
      }
      inventory.stop();
      // A shared simulated driver is its owner's to close, and so is what wraps it.
      if (!options.sim) {
        if (hardware !== sim) await hardware.close();
        await sim.close();
      }
      if (ownStore) await store.close();
    },
  };
}

/** Creates the operator `admin` with ADMIN_TOKEN, as the server does on its first start. */
export async function bootstrapTestAdmin(store: Store, clock: Clock): Promise<void> {
  const admin = fromValue(ADMIN_TOKEN);
  await store.bootstrapAdmin({ userName: 'admin', token: { token_hash: admin.hash, prefix: admin.prefix } }, clock.now());
}

/** The API in-process over `nodes` (default testInventory()); `databaseUrl`: PostgreSQL instead of PGlite. */
export function startTestApp(nodes: SimulatedNodeSpec[] = testInventory(), options: { readonly databaseUrl?: string } = {}): Promise<TestApp> {
  return startApp({ nodes, databaseUrl: options.databaseUrl });
}

/** Creates a project, a user with `role` in it, and a token; returns the token value and ids. */
export async function createProjectUser(
  t: Pick<TestApp<Clock>, 'request'>,
  projectName: string,
  role: 'reader' | 'member' | 'manager' = 'member',
  userName = `${projectName}-${role}`,
): Promise<{ projectId: string; userId: string; token: string }> {
  let project = await t.request('GET', `/v1/projects/${projectName}`);
  if (project.status === 404) project = await t.request('POST', '/v1/projects', { body: { name: projectName } });
  const user = await t.request('POST', '/v1/users', { body: { name: userName, project_id: project.body.id, role } });
  if (user.status !== 201) throw new Error(`user create failed: ${JSON.stringify(user.body)}`);
  const token = await t.request('POST', '/v1/tokens', { body: { user_id: user.body.id } });
  if (token.status !== 201) throw new Error(`token create failed: ${JSON.stringify(token.body)}`);
  return { projectId: project.body.id, userId: user.body.id, token: token.body.token };
}
