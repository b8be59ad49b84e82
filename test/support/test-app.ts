import { createApp } from '../../src/api/app.js';
import { NodePolicy } from '../../src/domain/policy-rules/node-policy.js';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { fromValue } from '../../src/domain/tokens.js';
import { SimulatedDriver } from '../../src/drivers/simulated/simulated-driver.js';
import type { SimulatedNodeSpec } from '../../src/drivers/simulated/simulated-driver.js';
import { InventorySync } from '../../src/engine/inventory-sync.js';
import { createLogger } from '../../src/logger.js';
import { LeasePlanner } from '../../src/scheduler/lease-planner.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';

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

export interface TestApp {
  readonly store: Store;
  readonly driver: SimulatedDriver;
  readonly clock: ManualClock;
  readonly inventory: InventorySync;
  /** Sends a request; `token: null` sends none; the admin token by default. */
  request(
    method: string,
    path: string,
    options?: { token?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

/**
 * The whole API in-process: in-memory PGlite, simulated hardware, a manual clock, the admin bootstrapped.
 * `databaseUrl`: an empty PostgreSQL database instead of PGlite (test/support/postgres.ts makes one).
 */
export async function startTestApp(
  nodes: SimulatedNodeSpec[] = testInventory(),
  options: { readonly databaseUrl?: string } = {},
): Promise<TestApp> {
  const clock = new ManualClock('2030-01-01T00:00:00Z');
  const logger = createLogger('silent');
  const store = await openStore({ dataDir: 'memory://', databaseUrl: options.databaseUrl });
  const admin = fromValue(ADMIN_TOKEN);
  await store.bootstrapAdmin({ userName: 'admin', token: { token_hash: admin.hash, prefix: admin.prefix } }, clock.now());
  const driver = new SimulatedDriver({ nodes, clock, timings: { powerMs: 10, cleanMs: 10, deployMs: 10, undeployMs: 10, manageMs: 10, consoleMs: 10 } });
  const inventory = new InventorySync({ driver, store, clock, logger, intervalMs: 60_000 });
  await inventory.syncAll();
  const planner = new LeasePlanner(store, clock, { cleaningGapMs: CLEANING_GAP_MS });
  const app = createApp({ store, driver, inventory, clock, logger, planner, cleaningGapMs: CLEANING_GAP_MS, policy: NodePolicy.defaults() });

  return {
    store,
    driver,
    clock,
    inventory,
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      const token = options.token === undefined ? ADMIN_TOKEN : options.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let body: string | undefined = options.rawBody;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      } else if (body !== undefined) {
        headers['content-type'] ??= 'application/json';
      }
      const res = await app.request(path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        /* not JSON: keep the text */
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async close() {
      inventory.stop();
      await driver.close();
      await store.close();
    },
  };
}

/** Creates a project, a user with `role` in it, and a token; returns the token value and ids. */
export async function createProjectUser(
  t: TestApp,
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
