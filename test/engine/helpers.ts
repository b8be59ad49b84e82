import { ManualClock } from '../../src/domain/manual-clock.js';
import type { AuditEvent, Lease } from '../../src/domain/leasing.js';
import type { HardwareDriver } from '../../src/drivers/hardware-driver.js';
import { SimulatedDriver } from '../../src/drivers/simulated/simulated-driver.js';
import type { SimulatedNodeSpec, SimulatedTimings } from '../../src/drivers/simulated/simulated-driver.js';
import type { InventorySync } from '../../src/engine/inventory-sync.js';
import type { SimulatedNetworks } from '../../src/drivers/simulated/simulated-networks.js';
import { LeaseEngine } from '../../src/engine/lease-engine.js';
import type { NetworkTeardown } from '../../src/engine/network-teardown.js';
import type { LifecycleService } from '../../src/leasing/lifecycle-service.js';
import type { LeaseService } from '../../src/leasing/lease-service.js';
import type { LeaseEngineOptions } from '../../src/engine/lease-engine.js';
import { createLogger } from '../../src/logger.js';
import { startApp } from '../support/test-app.js';
import type { Store } from '../../src/store/store.js';

export const T0 = new Date('2030-01-01T00:00:00.000Z');
export const MINUTE = 60_000;
export const HOUR = 3_600_000;

/** `T0` plus `ms`. */
export const at = (ms: number): Date => new Date(T0.getTime() + ms);

/** Every simulated operation takes a few milliseconds of the manual clock. */
export const TIMINGS: Partial<SimulatedTimings> = {
  powerMs: 5, cleanMs: 5, deployMs: 5, undeployMs: 5, manageMs: 5, consoleMs: 5, bootOutputMs: 0,
};

export const NODE_IDS = [
  '7e0a1c52-0000-4000-8000-000000000001',
  '7e0a1c52-0000-4000-8000-000000000002',
  '7e0a1c52-0000-4000-8000-000000000003',
] as const;

export function nodeSpec(index: number, over: Partial<SimulatedNodeSpec> = {}): SimulatedNodeSpec {
  return {
    uuid: NODE_IDS[index]!,
    name: `node-${index + 1}`,
    owner: 'owners',
    resource_class: 'baremetal',
    properties: { memory_mb: 65536, cpus: 32, local_gb: 480, cpu_arch: 'x86_64' },
    driver_info: { ipmi_password: 'never-logged' },
    ...over,
  };
}

export interface DriverCall {
  readonly method: string;
  readonly args: readonly unknown[];
}

/**
 * A driver wrapper that records every call reaching the real driver. `hook` runs before each call: it may throw
 * (the call fails without reaching the driver) or never resolve (the process "hangs" there, as if it crashed).
 */
export class SpyDriver {
  readonly calls: DriverCall[] = [];
  hook: ((method: string, args: readonly unknown[]) => Promise<void> | void) | null = null;
  readonly driver: HardwareDriver;

  constructor(readonly inner: HardwareDriver) {
    this.driver = new Proxy(inner, {
      get: (target, prop, receiver) => {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (this.hook) await this.hook(String(prop), args);
          this.calls.push({ method: String(prop), args });
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }

  /** Calls that act on a node (reads left out), as `method arg…` strings for readable assertions. */
  actions(nodeId?: string): string[] {
    return this.calls
      .filter((c) => !['getNode', 'listNodes', 'ping', 'getConsole', 'getBootDevice', 'listNics', 'listVifNics'].includes(c.method))
      .filter((c) => nodeId === undefined || c.args[0] === nodeId)
      // updateNode's third argument is the node as read before the change: context, not part of the action.
      .map((c) => (c.method === 'updateNode' ? { ...c, args: c.args.slice(0, 2) } : c))
      .map((c) => [c.method, ...c.args.slice(nodeId === undefined ? 0 : 1).map((a) => (typeof a === 'string' ? a : JSON.stringify(a)))].join(' '));
  }
}

export interface Harness {
  readonly store: Store;
  readonly clock: ManualClock;
  readonly sim: SimulatedDriver;
  readonly spy: SpyDriver;
  readonly inventory: InventorySync;
  /** The simulated networks the nodes' NICs are cabled to, and what the engine takes networks off nodes with. */
  readonly networks: SimulatedNetworks;
  readonly teardown: NetworkTeardown;
  /** Nodes replaced, returned, reclaimed (what the reconciler hands failed nodes to). */
  readonly lifecycle: LifecycleService;
  /** Leasing as the API uses it (extensions, auto-renew). */
  readonly leasing: LeaseService;
  readonly lesseeId: string;
  readonly otherLesseeId: string;
  readonly ownerId: string;
  /** A lease engine over this harness (options override the defaults). */
  engine(options?: Partial<LeaseEngineOptions>): LeaseEngine;
  createLease(input: { start: Date; end: Date; nodes: readonly string[]; project?: string; gapMs?: number }): Promise<Lease>;
  lease(id: string): Promise<Lease>;
  events(leaseId: string): Promise<AuditEvent[]>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly nodes?: readonly SimulatedNodeSpec[];
  /** Another store (PostgreSQL); default in-memory PGlite. */
  readonly openStore?: () => Promise<Store>;
  readonly clock?: ManualClock;
  /** An existing simulated driver (shared by two harnesses over one database). */
  readonly sim?: SimulatedDriver;
  /** Reuse the projects of an earlier harness over the same database. */
  readonly projects?: { readonly lesseeId: string; readonly otherLesseeId: string; readonly ownerId: string };
}

export const silentLogger = createLogger(process.env.ENGINE_TEST_LOG ?? 'silent');

export async function harness(options: HarnessOptions = {}): Promise<Harness> {
  const clock = options.clock ?? new ManualClock(T0);
  let spy: SpyDriver | undefined;
  // The tests' one harness, without the HTTP side: the store, the simulated hardware behind a spy, the inventory.
  const app = await startApp({
    nodes: options.nodes ? [...options.nodes] : [nodeSpec(0)],
    clock,
    timings: TIMINGS,
    store: options.openStore ? await options.openStore() : undefined,
    sim: options.sim,
    driver: ({ sim }) => (spy = new SpyDriver(sim)).driver,
  });
  const { store, inventory, driver: sim } = app;
  const given = options.projects;
  const projects = given
    ? { ownerId: given.ownerId, lesseeId: given.lesseeId, otherLesseeId: given.otherLesseeId }
    : {
        ownerId: (await store.createProject({ name: 'owners' }, clock.now())).id,
        lesseeId: (await store.createProject({ name: 'lessees' }, clock.now())).id,
        otherLesseeId: (await store.createProject({ name: 'others' }, clock.now())).id,
      };
  await inventory.syncAll();
  const engines: LeaseEngine[] = [];
  return {
    store,
    clock,
    sim,
    spy: spy!,
    inventory,
    networks: app.networks as SimulatedNetworks,
    teardown: app.teardown!,
    lifecycle: app.deps.lifecycle,
    leasing: app.deps.leasing,
    ...projects,
    engine(over = {}) {
      // Runs on the manual clock never wait in place (watchMs 0): each wait hands the task back, as the tests expect.
      const engine = new LeaseEngine({ store, driver: spy!.driver, clock, logger: silentLogger, inventory, networks: app.teardown, watchMs: 0, ...over });
      engines.push(engine);
      return engine;
    },
    createLease({ start, end, nodes, project, gapMs }) {
      return store.leasing.createLease(
        {
          name: 'test-lease',
          project_id: project ?? projects.lesseeId,
          created_by: null,
          start,
          end,
          request: { nodes },
          allocations: nodes.map((node_id) => ({ node_id, group_index: 0 })),
          cleaning_gap_ms: gapMs ?? 0,
          max_nodes: null,
        },
        [],
        clock.now(),
      );
    },
    async lease(id) {
      const lease = await store.leasing.getLease(id);
      if (!lease) throw new Error(`lease ${id} not found`);
      return lease;
    },
    async events(leaseId) {
      const page = await store.leasing.listEvents({ lease_id: leaseId }, { limit: 1000 });
      return [...page.items].reverse();
    },
    async close() {
      await Promise.all(engines.map((e) => e.stop()));
      await app.close();
      // A store opened for this harness (PostgreSQL, or one shared with another harness) is closed here too.
      if (options.openStore) await store.close();
    },
  };
}

/**
 * Runs the engine, moving the manual clock `stepMs` at a time, until `done()` holds. Returns the clock time it
 * took. Fails after `maxSteps` (a stuck engine is a failure, not a hang).
 */
export async function runUntil(
  h: Pick<Harness, 'clock'>,
  engines: LeaseEngine | readonly LeaseEngine[],
  done: () => Promise<boolean>,
  { stepMs = 1_000, maxSteps = 200 } = {},
): Promise<number> {
  const list = Array.isArray(engines) ? engines : [engines as LeaseEngine];
  const started = h.clock.now().getTime();
  for (let i = 0; i < maxSteps; i++) {
    await Promise.all(list.map((e) => e.runDue()));
    if (await done()) return h.clock.now().getTime() - started;
    await h.clock.advance(stepMs);
  }
  throw new Error(`condition not reached after ${maxSteps} steps of ${stepMs} ms`);
}

export const allocationState = async (h: Harness, leaseId: string): Promise<string[]> =>
  (await h.lease(leaseId)).allocations.map((a) => a.state);
