import { afterEach, describe, expect, it } from 'vitest';
import { Reconciler } from '../../src/engine/reconciler.js';
import { HOUR, MINUTE, NODE_IDS, at, harness, nodeSpec, runUntil, silentLogger } from './helpers.js';
import type { Harness } from './helpers.js';

const [N1, N2, N3] = NODE_IDS;
let h: Harness;
afterEach(async () => {
  await h?.close();
});

async function setUp(): Promise<Harness> {
  h = await harness({ nodes: [nodeSpec(0), nodeSpec(1), nodeSpec(2)] });
  for (const node of NODE_IDS) {
    await h.store.leasing.createOffer({ node_id: node, project_id: h.ownerId, start: at(0), end: null, max_lease_ms: null, min_lease_ms: null, allowed_projects: null, created_by: null }, [], h.clock.now());
  }
  return h;
}

function reconciler(): Reconciler {
  return new Reconciler({
    store: h.store,
    driver: h.spy.driver,
    clock: h.clock,
    logger: silentLogger,
    inventory: h.inventory,
    intervalMs: 30_000,
    onNodeFailure: (finding) => h.lifecycle.onFinding(finding),
  });
}

const holder = async (node: string) => (await h.store.leasing.currentLeases([node], h.clock.now())).get(node)?.project_id ?? null;
const eventsOf = async (leaseId: string, type: string) => (await h.events(leaseId)).filter((e) => e.type === type);

describe('a node that fails during a lease', () => {
  it('is replaced within one reconcile pass: the substitute is handed over, the failed node is out of reach and loses its lessee', async () => {
    await setUp();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    expect((await h.sim.getNode(N1)).lessee).toBe(h.lesseeId);

    await h.clock.advance(MINUTE);
    h.sim.setMaintenance(N1, true, 'fan failure');
    const pass = await reconciler().reconcile();
    expect(pass.failures).toBe(1);
    expect(await holder(N1)).toBeNull(); // access cut at the instant of the replacement
    await runUntil(h, engine, async () => (await h.sim.getNode(N2)).lessee === h.lesseeId, { stepMs: 100 });
    expect(await holder(N2)).toBe(h.lesseeId);
    expect((await h.sim.getNode(N1)).lessee).toBeNull();
    const l = await h.lease(lease.id);
    expect(l.state).toBe('active');
    expect(l.allocations.map((a) => [a.node_id, a.leave_reason, a.state])).toEqual(
      expect.arrayContaining([
        [N1, 'replaced', 'releasing'],
        [N2, null, 'active'],
      ]),
    );
    const [replaced] = await eventsOf(lease.id, 'lease.node_replaced');
    expect(replaced).toMatchObject({ node_id: N1, actor: 'engine', details: { replacement: N2, kind: 'maintenance' } });
    expect(replaced!.message).toContain('fan failure');
    // The failed node stays out: cleaning waits for its maintenance to be cleared.
    expect(l.allocations.find((a) => a.node_id === N1)!.step).not.toBe('wait_available');
    // Nothing more to do on the next pass.
    expect((await reconciler().reconcile()).failures).toBe(0);
  });

  it('between passes, the quick failure watch hands a node gone into maintenance to its substitute without listing every node', async () => {
    await setUp();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    const r = reconciler();
    expect(await r.watchFailures()).toBe(0); // nothing troubled: nothing read but the troubled list
    h.sim.setMaintenance(N1, true, 'fan failure');
    h.spy.calls.length = 0;
    expect(await r.watchFailures()).toBe(1);
    expect(h.spy.calls.map((c) => c.method)).not.toContain('listNodes');
    expect(await holder(N1)).toBeNull();
    await runUntil(h, engine, async () => (await h.sim.getNode(N2)).lessee === h.lesseeId, { stepMs: 100 });
    expect((await eventsOf(lease.id, 'lease.node_replaced')).map((e) => e.details)).toEqual([expect.objectContaining({ replacement: N2, kind: 'maintenance' })]);
    // Already acted on: neither the next look nor the next full pass acts again; the recovery waits for a pass.
    expect(await r.watchFailures()).toBe(0);
    expect((await r.reconcile()).failures).toBe(0);
  });

  it("under replace 'ask' the lessee is told once (lease.degraded), the lease keeps its node, and hears when it recovers", async () => {
    await setUp();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.store.lifecycle.setReplacePolicy(lease.id, 'ask', [], h.clock.now());
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    h.sim.setMaintenance(N1, true, 'disk errors');
    await reconciler().reconcile();
    await reconciler().reconcile();
    const degraded = await eventsOf(lease.id, 'lease.degraded');
    expect(degraded).toHaveLength(1);
    expect(degraded[0]!.message).toContain('disk errors');
    expect(degraded[0]!.message).toContain('ask for a substitute');
    expect(await holder(N1)).toBe(h.lesseeId);
    expect((await h.lease(lease.id)).allocations[0]!.failure).toContain('disk errors');
    h.sim.setMaintenance(N1, false);
    await reconciler().reconcile();
    expect(await eventsOf(lease.id, 'lease.node_recovered')).toHaveLength(1);
    expect((await h.lease(lease.id)).allocations[0]!.failure).toBeNull();
  });

  it('without a free equivalent node the lease is degraded, says why, and keeps its node', async () => {
    await setUp();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N2, N3], project: h.otherLesseeId });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    h.sim.setMaintenance(N1, true, 'PSU');
    await reconciler().reconcile();
    const [degraded] = await eventsOf(lease.id, 'lease.degraded');
    expect(degraded!.message).toContain('no equivalent node is free and allowed for the rest of the lease');
    expect(await holder(N1)).toBe(h.lesseeId);
  });

  it('an upcoming lease whose node was quarantined after a failed cleaning gets another node before it starts', async () => {
    await setUp();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(HOUR), end: at(2 * HOUR), nodes: [N1] });
    await h.store.tasks.quarantineNode(N1, 'clean step erase_devices failed', h.clock.now());
    expect((await reconciler().reconcile()).failures).toBe(1);
    const l = await h.lease(lease.id);
    expect(l.allocations.find((a) => a.leave_reason === null)!.node_id).toBe(N2);
    expect(l.allocations.find((a) => a.node_id === N1)).toMatchObject({ leave_reason: 'replaced', state: 'cancelled' });
    await h.clock.advanceTo(at(HOUR));
    await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'active', { stepMs: 100 });
    expect((await h.sim.getNode(N2)).lessee).toBe(h.lesseeId);
    expect((await h.sim.getNode(N1)).lessee).toBeNull();
  });
});
