import { afterAll, afterEach, describe, expect, it, onTestFinished } from 'vitest';
import type { Lease } from '../../src/domain/leasing.js';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { SimulatedDriver } from '../../src/drivers/simulated/simulated-driver.js';
import type { LeaseEngine, LeaseEngineOptions } from '../../src/engine/lease-engine.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { POSTGRES_SKIP_REASON, TEST_DATABASE_URL, testDatabases } from '../support/postgres.js';
import { HOUR, MINUTE, NODE_IDS, SpyDriver, T0, TIMINGS, at, harness, nodeSpec, runUntil } from './helpers.js';
import type { Harness } from './helpers.js';

const [N1] = NODE_IDS;
let opened: Harness[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((h) => h.close()));
});
const track = (h: Harness) => (opened.push(h), h);

/** A lease on N1 from the first minute to the first hour, handed over, its node powered on by the lessee. */
async function activeLeasePoweredOn(): Promise<{ h: Harness; lease: Lease }> {
  const h = track(await harness());
  const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
  await h.clock.advanceTo(at(MINUTE));
  await h.engine().runDue();
  await h.sim.setPowerState(N1, 'power on');
  await h.clock.advance(10);
  return { h, lease };
}

describe('lease engine: crash safety', () => {
  it('a release cut off mid-way by a crash is finished by a fresh engine, each action done exactly once', async () => {
    const { h, lease } = await activeLeasePoweredOn();
    h.spy.calls.length = 0;

    // The first engine "crashes" on its way to the power off: its call never returns, its claim stays.
    const crashing = new SpyDriver(h.spy.driver);
    let release: (err: Error) => void = () => undefined;
    crashing.hook = (method) =>
      method === 'setPowerState' ? new Promise<void>((_, reject) => (release = reject)) : undefined;
    const claimMs = 30_000;
    const first = h.engine({ driver: crashing.driver, claimMs, workerId: 'crashed' });
    await h.clock.advanceTo(at(HOUR));
    const hung = first.runDue();
    await expect
      .poll(async () => (await h.lease(lease.id)).allocations[0]?.step, { timeout: 5_000 })
      .toBe('power_off');
    expect(h.spy.actions(N1)).toEqual(['updateNode {"lessee":null,"extra":{"leasehold_lease":null}}']);

    // A fresh engine does not touch the task while the claim lasts, then resumes at the recorded step.
    const second = h.engine({ workerId: 'fresh', claimMs });
    await h.clock.advance(claimMs - 1_000);
    expect(await second.runDue()).toBe(0);
    await h.clock.advance(1_000);
    await runUntil(h, second, async () => (await h.lease(lease.id)).state === 'ended');

    // The crashed engine wakes up failing: it neither reopens the task nor reports on the finished release.
    release(new Error('process was frozen'));
    await hung;
    expect(h.spy.actions(N1)).toEqual([
      'updateNode {"lessee":null,"extra":{"leasehold_lease":null}}',
      'setPowerState power off',
      'setProvisionState manage',
      'setProvisionState provide',
    ]);
    const types = (await h.events(lease.id)).map((e) => e.type);
    expect(types.filter((t) => t === 'allocation.released')).toHaveLength(1);
    expect(types.filter((t) => t === 'node.lessee_cleared')).toHaveLength(1);
    expect(types).not.toContain('allocation.end_error');
    expect(await second.runDue()).toBe(0);
    await h.clock.advance(HOUR);
    expect(await second.runDue()).toBe(0);
    expect((await h.lease(lease.id)).allocations[0]).toMatchObject({ state: 'released' });
  });

  it('a start interrupted after Ironic was updated completes once, without setting the lessee twice', async () => {
    const h = track(await harness());
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    const crashing = new SpyDriver(h.spy.driver);
    // Crashes right after Ironic took the lessee: the write is made, its answer never comes back.
    crashing.hook = (method, args) =>
      method === 'updateNode'
        ? h.spy.driver.updateNode(...(args as Parameters<typeof h.spy.driver.updateNode>)).then(() => new Promise<void>(() => undefined))
        : undefined;
    const first = h.engine({ driver: crashing.driver, claimMs: 10_000 });
    await h.clock.advanceTo(at(MINUTE));
    void first.runDue();
    await expect.poll(() => h.spy.actions(N1).length, { timeout: 5_000 }).toBe(1);

    const second = h.engine({ claimMs: 10_000 });
    await h.clock.advance(10_000);
    expect(await second.runDue()).toBe(1);
    expect((await h.lease(lease.id)).state).toBe('active');
    expect(h.spy.actions(N1)).toHaveLength(1);
    expect((await h.events(lease.id)).filter((e) => e.type === 'allocation.started')).toHaveLength(1);
  });
});

describe('lease engine: claims tied to a live worker', () => {
  it('a running engine keeps its claim through a slow step; frozen past its claim, it is taken over within the claim length and records nothing when it wakes', async () => {
    const { h, lease } = await activeLeasePoweredOn();

    // Engine a: its power-off call hangs (a slow Ironic), and its store calls can be frozen (SIGSTOP).
    const slow = new SpyDriver(h.spy.driver);
    let failPowerOff: (err: Error) => void = () => undefined;
    slow.hook = (method) => (method === 'setPowerState' ? new Promise<void>((_, reject) => (failPowerOff = reject)) : undefined);
    const frozen = freezable(h.store);
    const claimMs = 5_000;
    const a = h.engine({ driver: slow.driver, store: frozen.store, workerId: 'a', claimMs });
    await h.clock.advanceTo(at(HOUR));
    a.start();
    await expect.poll(async () => (await h.lease(lease.id)).allocations[0]?.step, { timeout: 5_000 }).toBe('power_off');

    // A minute of a's slow step: its heartbeat keeps the claim, engine b never gets the task.
    const b = h.engine({ workerId: 'b', claimMs });
    for (let s = 0; s < 60; s++) {
      await h.clock.advance(1_000);
      expect(await b.runDue()).toBe(0);
    }

    // a freezes: no more heartbeats. b takes the task over once the claim has run out, and finishes the release.
    frozen.freeze();
    onTestFinished(() => frozen.thaw());
    const frozenAt = h.clock.now().getTime();
    let claimedAfterMs = -1;
    await runUntil(h, b, async () => {
      if (claimedAfterMs < 0 && (await h.lease(lease.id)).allocations[0]?.step !== 'power_off') claimedAfterMs = h.clock.now().getTime() - frozenAt;
      return (await h.lease(lease.id)).state === 'ended';
    }, { stepMs: 500 });
    expect(claimedAfterMs).toBeGreaterThan(0);
    // The claim runs out ≤ claimMs after the last beat; b's step shows after its power off settles (settleMs, 1 s).
    expect(claimedAfterMs).toBeLessThanOrEqual(claimMs + 1_000 + 500);

    // a wakes up, its hung call failing: it neither records a step nor reports an error on the finished release.
    frozen.thaw();
    failPowerOff(new Error('process was frozen'));
    await a.stop();
    const types = (await h.events(lease.id)).map((e) => e.type);
    expect(types.filter((t) => t === 'allocation.released')).toHaveLength(1);
    expect(types.filter((t) => t === 'allocation.releasing')).toHaveLength(1);
    expect(types).not.toContain('allocation.end_error');
    expect((await h.lease(lease.id)).allocations[0]).toMatchObject({ state: 'released', step: null });
  });
});

/** A store whose engine port (store.tasks) can be frozen: calls made meanwhile wait until thawed, like a SIGSTOPped process. */
function freezable(store: Store) {
  let gate: Promise<void> | null = null;
  let open: () => void = () => undefined;
  const tasks = new Proxy(store.tasks, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        while (gate) await gate;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    store: new Proxy(store, { get: (target, prop, receiver) => (prop === 'tasks' ? tasks : Reflect.get(target, prop, receiver)) }),
    freeze() {
      gate = new Promise<void>((resolve) => (open = resolve));
    },
    thaw() {
      gate = null;
      open();
    },
  };
}

/** Two engines over one database and one set of hardware: every task runs once, whoever claims it. */
async function twoEnginesRunEachTaskOnce(
  hs: readonly [Harness, Harness],
  options: Partial<LeaseEngineOptions> = { batch: 2 },
  /** With small batches both engines get work; with the default ones the first to claim may take all of it. */
  shared = true,
): Promise<void> {
  const [a, b] = hs;
  const nodes = [0, 1, 2].map((i) => NODE_IDS[i]!);
  const leases: Lease[] = [];
  for (const node of nodes) {
    leases.push(await a.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [node] }));
    leases.push(await a.createLease({ start: at(HOUR), end: at(2 * HOUR), nodes: [node], project: a.otherLesseeId }));
  }
  const engines: LeaseEngine[] = [a.engine({ ...options, workerId: 'a' }), b.engine({ ...options, workerId: 'b' })];
  await a.clock.advanceTo(at(MINUTE));
  const firsts = leases.filter((_, i) => i % 2 === 0);
  await runUntil(a, engines, async () => (await Promise.all(firsts.map((l) => a.lease(l.id)))).every((l) => l.state === 'active'), { stepMs: 500 });
  await a.clock.advanceTo(at(HOUR));
  const seconds = leases.filter((_, i) => i % 2 === 1);
  await runUntil(a, engines, async () => (await Promise.all(seconds.map((l) => a.lease(l.id)))).every((l) => l.state === 'active'), { stepMs: 500 });
  await a.clock.advanceTo(at(2 * HOUR));
  await runUntil(a, engines, async () => (await Promise.all(leases.map((l) => a.lease(l.id)))).every((l) => l.state === 'ended'), { stepMs: 500 });

  const actions = [...a.spy.actions(), ...b.spy.actions()];
  for (const lease of leases) {
    expect(actions.filter((x) => x.includes(`"leasehold_lease":"${lease.id}"`))).toHaveLength(1);
    const types = (await a.events(lease.id)).map((e) => e.type);
    expect(types.filter((t) => t === 'allocation.started')).toHaveLength(1);
    expect(types.filter((t) => t === 'allocation.released')).toHaveLength(1);
  }
  for (const node of nodes) {
    expect(actions.filter((x) => x === `setProvisionState ${node} provide`)).toHaveLength(2);
    expect(actions.filter((x) => x === `updateNode ${node} {"lessee":null,"extra":{"leasehold_lease":null}}`)).toHaveLength(2);
  }
  if (!shared) return;
  // Both engines did some of the work.
  expect(a.spy.actions().length).toBeGreaterThan(0);
  expect(b.spy.actions().length).toBeGreaterThan(0);
}

const threeNodes = () => [0, 1, 2].map((i) => nodeSpec(i));

describe('lease engine: two engines on one store', () => {
  it('on PGlite two engines never both run one task', async () => {
    const a = track(await harness({ nodes: threeNodes() }));
    const b = track(await harness({ clock: a.clock, sim: a.sim, openStore: async () => a.store, projects: a }));
    // b shares a's store: close it only once.
    opened = opened.filter((h) => h !== b);
    await twoEnginesRunEachTaskOnce([a, b]);
  });
});

if (!TEST_DATABASE_URL) {
  console.warn(POSTGRES_SKIP_REASON);
  describe.skip(POSTGRES_SKIP_REASON, () => {
    it('two engines on one PostgreSQL database never both run one task', () => undefined);
  });
} else {
  const databases = testDatabases(TEST_DATABASE_URL, 'leasehold_engine');
  afterAll(() => databases.dropAll());

  describe('lease engine: two engines on PostgreSQL', () => {
    it('two engines on one PostgreSQL database, each with its own connection pool, never both run one task', async () => {
      const { url } = await databases.create();
      const clock = new ManualClock(T0);
      const sim = new SimulatedDriver({ nodes: threeNodes(), clock, timings: TIMINGS });
      const a = track(await harness({ clock, sim, openStore: () => openStore({ databaseUrl: url, dataDir: 'unused' }) }));
      const b = track(await harness({ clock, sim, projects: a, openStore: () => openStore({ databaseUrl: url, dataDir: 'unused' }) }));
      try {
        await twoEnginesRunEachTaskOnce([a, b]);
      } finally {
        await sim.close();
      }
    });

    it('two engines on one PostgreSQL database writing their tasks in batches (the defaults) still run each task exactly once', async () => {
      const { url } = await databases.create();
      const clock = new ManualClock(T0);
      const sim = new SimulatedDriver({ nodes: threeNodes(), clock, timings: TIMINGS });
      const a = track(await harness({ clock, sim, openStore: () => openStore({ databaseUrl: url, dataDir: 'unused' }) }));
      const b = track(await harness({ clock, sim, projects: a, openStore: () => openStore({ databaseUrl: url, dataDir: 'unused' }) }));
      try {
        await twoEnginesRunEachTaskOnce([a, b], {}, false);
      } finally {
        await sim.close();
      }
    });
  });
}
