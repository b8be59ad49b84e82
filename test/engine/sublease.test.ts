import { afterEach, describe, expect, it } from 'vitest';
import { Reconciler } from '../../src/engine/reconciler.js';
import type { Lease } from '../../src/domain/leasing.js';
import { HOUR, MINUTE, NODE_IDS, at, harness, nodeSpec, runUntil, silentLogger } from './helpers.js';
import type { Harness } from './helpers.js';

const [N1] = NODE_IDS;
let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** The lessee leases N1 for [0, 4 h) and sub-offers [1 h, 3 h) of it to the other lessee, who leases it. */
async function subleased(): Promise<{ parent: Lease; sub: Lease }> {
  h = await harness({ nodes: [nodeSpec(0)] });
  await h.store.leasing.createOffer({ node_id: N1, project_id: h.ownerId, start: at(0), end: null, max_lease_ms: null, min_lease_ms: null, allowed_projects: null, created_by: null }, [], h.clock.now());
  const parent = await h.createLease({ start: at(0), end: at(4 * HOUR), nodes: [N1], gapMs: 10 * MINUTE });
  await h.store.leasing.createOffer(
    { node_id: N1, project_id: h.lesseeId, start: at(HOUR), end: at(3 * HOUR), max_lease_ms: null, min_lease_ms: null, allowed_projects: [h.otherLesseeId], created_by: null, parent_allocation_id: parent.allocations[0]!.id },
    [],
    h.clock.now(),
  );
  const sub = await h.createLease({ start: at(HOUR), end: at(3 * HOUR), nodes: [N1], project: h.otherLesseeId, gapMs: 10 * MINUTE });
  expect(sub.allocations[0]!.parent_allocation_id).toBe(parent.allocations[0]!.id);
  return { parent, sub };
}

const lessee = async () => (await h.sim.getNode(N1)).lessee;
const holder = async () => (await h.store.leasing.currentLeases([N1], h.clock.now())).get(N1)?.project_id ?? null;

describe('a sub-leased node in the engine', () => {
  it('is the sub-lessee\'s in Ironic during the sub-lease, then cleaned and only then handed back to the lessee', async () => {
    const { parent, sub } = await subleased();
    const engine = h.engine();
    await runUntil(h, engine, async () => (await lessee()) === h.lesseeId, { stepMs: MINUTE });
    await h.clock.advanceTo(at(HOUR));
    await runUntil(h, engine, async () => (await lessee()) === h.otherLesseeId, { stepMs: MINUTE });
    expect(await holder()).toBe(h.otherLesseeId);
    expect((await h.sim.getNode(N1)).extra.leasehold_lease).toBe(sub.id);

    await h.clock.advanceTo(at(3 * HOUR));
    // The sub-lessee's access ends at the instant; the lessee's comes back once the node is wiped (as any next
    // lessee's would): nothing of the sub-lessee's is left for it.
    expect(await holder()).toBeNull();
    await runUntil(h, engine, async () => (await lessee()) === h.lesseeId, { stepMs: MINUTE });
    expect(await holder()).toBe(h.lesseeId);
    expect((await h.sim.getNode(N1)).extra.leasehold_lease).toBe(parent.id);
    expect((await h.lease(sub.id)).allocations[0]!.state).toBe('released');
    expect(h.spy.actions(N1).filter((a) => a.startsWith('setProvisionState') && a.includes('provide'))).toHaveLength(1);
    expect((await h.events(sub.id)).map((e) => e.type)).toContain('allocation.handed_back');
    expect((await h.lease(parent.id)).state).toBe('active');
  });

  it('ends with its parent: the sub-lessee loses Ironic\'s lessee at that instant and the node is cleaned once', async () => {
    const { parent, sub } = await subleased();
    const engine = h.engine();
    await h.clock.advanceTo(at(HOUR + MINUTE));
    await runUntil(h, engine, async () => (await lessee()) === h.otherLesseeId, { stepMs: MINUTE });

    // As LeaseService.end does for a running lease: its end moved to now.
    const endedAt = h.clock.now();
    await h.store.leasing.changeLeaseEnd(parent.id, endedAt, 10 * MINUTE, [{ type: 'lease.ended_early', actor: 'astro', lease_id: parent.id }], endedAt);
    expect(await holder()).toBeNull();
    const cut = await h.lease(sub.id);
    expect(cut.end).toEqual(endedAt);
    await runUntil(h, engine, async () => (await h.lease(parent.id)).state === 'ended' && (await h.lease(sub.id)).state === 'ended', { stepMs: 1_000 });
    const node = await h.sim.getNode(N1);
    expect(node.lessee).toBeNull();
    expect(node.provision_state).toBe('available');
    expect(h.spy.actions(N1).filter((a) => a.startsWith('setProvisionState') && a.includes('provide'))).toHaveLength(1);
    expect((await h.events(sub.id)).map((e) => e.type)).toContain('lease.sublease_ended');
  });

  it('keeps the sub-lessee as Ironic\'s lessee through a reconcile pass, and repairs a drifted mark back to it', async () => {
    const { sub } = await subleased();
    const engine = h.engine();
    await h.clock.advanceTo(at(HOUR));
    await runUntil(h, engine, async () => (await lessee()) === h.otherLesseeId, { stepMs: MINUTE });
    const reconciler = new Reconciler({ store: h.store, driver: h.spy.driver, clock: h.clock, logger: silentLogger, inventory: h.inventory, intervalMs: 30_000 });
    expect((await reconciler.reconcile()).repairs).toEqual([]);
    await h.sim.updateNode(N1, { lessee: h.lesseeId, extra: { leasehold_lease: null } });
    const pass = await reconciler.reconcile();
    expect(pass.repairs.map((r) => r.kind)).toEqual(['restore_lessee']);
    expect(await lessee()).toBe(h.otherLesseeId);
    expect((await h.sim.getNode(N1)).extra.leasehold_lease).toBe(sub.id);
  });
});
