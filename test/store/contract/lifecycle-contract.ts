import { describe, expect, it } from 'vitest';
import { ConflictError, LeaseConflictError, NotFoundError } from '../../../src/domain/errors.js';
import type { Store } from '../../../src/store/store.js';
import { HOUR, at, nodeRecord, type OpenFreshStore, useFreshStores } from './fixtures.js';

const GAP = 10 * 60_000;

/** The LifecycleStore part of the contract (store.lifecycle): nodes leaving a lease before its end, failures, reclaim. */
export function lifecycleContract(open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  async function setup() {
    const store = await fresh();
    await store.createProject({ name: 'owners' }, at(0));
    const lessee = await store.createProject({ name: 'lessees' }, at(0));
    await store.syncNodes(['n1', 'n2', 'n3'].map((id) => nodeRecord(id, { owner: 'owners' })), at(0));
    const lease = (startH: number, endH: number, on: readonly string[], project = lessee.id) =>
      store.leasing.createLease(
        {
          name: 'l',
          project_id: project,
          created_by: null,
          start: at(startH * HOUR),
          end: at(endH * HOUR),
          request: { nodes: on },
          allocations: on.map((node_id) => ({ node_id, group_index: 0 })),
          cleaning_gap_ms: GAP,
          max_nodes: null,
        },
        [],
        at(0),
      );
    return { store, lessee, lease };
  }
  const tasksDue = async (store: Store, ms: number) =>
    (await store.tasks.claimDueTasks('contract', at(ms), 100, 100 * HOUR)).map((t) => ({ allocation_id: t.allocation_id, kind: t.kind, due_at: t.due_at }));
  const event = (type: string) => ({ type, actor: 'contract', message: type });

  describe('nodes leaving a lease', () => {
    it('a substitute takes the rest of the window from the instant the node leaves; the old node is cut there and free after the cleaning gap', async () => {
      const { store, lease } = await setup();
      const l = await lease(0, 10, ['n1']);
      const old = l.allocations[0]!;
      const after = await store.lifecycle.leave({ allocation_id: old.id, node_id: 'n2', at: at(4 * HOUR), reason: 'replaced', cleaning_gap_ms: GAP }, [event('lease.node_replaced')], at(4 * HOUR));
      const cut = after.allocations.find((a) => a.id === old.id)!;
      const substitute = after.allocations.find((a) => a.id !== old.id)!;
      expect(cut).toMatchObject({ node_id: 'n1', end: at(4 * HOUR), leave_reason: 'replaced', left_at: at(4 * HOUR) });
      expect(substitute).toMatchObject({ node_id: 'n2', state: 'reserved', start: at(4 * HOUR), end: at(10 * HOUR), replaces: old.id, leave_reason: null });
      expect(after.end).toEqual(at(10 * HOUR));
      // The old node's end task moved to the instant it left; the substitute has its own start and end (an end
      // waits for its start: the starts are done first).
      const starts = await store.tasks.claimDueTasks('contract', at(10 * HOUR), 100, 1);
      expect(starts.map((t) => [t.allocation_id, t.kind, t.due_at])).toEqual(
        expect.arrayContaining([
          [old.id, 'start', at(0)],
          [substitute.id, 'start', at(4 * HOUR)],
        ]),
      );
      for (const t of starts) await store.tasks.completeTask(t.id, at(4 * HOUR));
      expect(await tasksDue(store, 4 * HOUR)).toEqual([{ allocation_id: old.id, kind: 'end', due_at: at(4 * HOUR) }]);
      expect(await tasksDue(store, 10 * HOUR)).toEqual([{ allocation_id: substitute.id, kind: 'end', due_at: at(10 * HOUR) }]);
      // n1 is free once its cleaning gap has passed; n2 is held to the end.
      await expect(lease(4, 5, ['n1'])).rejects.toBeInstanceOf(LeaseConflictError);
      expect((await lease(4 + GAP / HOUR, 6, ['n1'])).allocations[0]!.node_id).toBe('n1');
      await expect(lease(9, 11, ['n2'])).rejects.toBeInstanceOf(LeaseConflictError);
      const events = await store.leasing.listEvents({ lease_id: l.id }, { limit: 10, marker: null });
      expect(events.items.map((e) => e.type)).toContain('lease.node_replaced');
    });

    it('a node of an upcoming lease that leaves before the start holds nothing (cancelled, its tasks dropped); its substitute starts with the lease', async () => {
      const { store, lease } = await setup();
      const l = await lease(5, 10, ['n1']);
      const old = l.allocations[0]!;
      const after = await store.lifecycle.leave({ allocation_id: old.id, node_id: 'n2', at: at(HOUR), reason: 'replaced', cleaning_gap_ms: GAP }, [], at(HOUR));
      expect(after.allocations.find((a) => a.id === old.id)).toMatchObject({ state: 'cancelled', leave_reason: 'replaced' });
      expect(after.allocations.find((a) => a.id !== old.id)).toMatchObject({ node_id: 'n2', start: at(5 * HOUR), end: at(10 * HOUR) });
      expect(after.state).toBe('pending');
      expect((await tasksDue(store, 11 * HOUR)).filter((t) => t.allocation_id === old.id)).toEqual([]);
      expect((await lease(5, 10, ['n1'])).allocations[0]!.node_id).toBe('n1');
    });

    it('a substitute that is not free is refused as lease_conflict and nothing changes', async () => {
      const { store, lease } = await setup();
      const l = await lease(0, 10, ['n1']);
      await lease(6, 8, ['n2']);
      await expect(
        store.lifecycle.leave({ allocation_id: l.allocations[0]!.id, node_id: 'n2', at: at(2 * HOUR), reason: 'replaced', cleaning_gap_ms: GAP }, [event('lease.node_replaced')], at(2 * HOUR)),
      ).rejects.toBeInstanceOf(LeaseConflictError);
      const unchanged = (await store.leasing.getLease(l.id))!;
      expect(unchanged.allocations).toHaveLength(1);
      expect(unchanged.allocations[0]).toMatchObject({ node_id: 'n1', end: at(10 * HOUR), leave_reason: null });
      expect((await store.leasing.listEvents({ lease_id: l.id }, { limit: 10, marker: null })).items.map((e) => e.type)).not.toContain('lease.node_replaced');
    });

    it('a node returned early leaves without substitute; the lease keeps its other nodes and its end', async () => {
      const { store, lease } = await setup();
      const l = await lease(0, 10, ['n1', 'n2']);
      const after = await store.lifecycle.leave({ allocation_id: l.allocations[0]!.id, at: at(3 * HOUR), reason: 'returned', cleaning_gap_ms: GAP }, [], at(3 * HOUR));
      expect(after.allocations).toHaveLength(2);
      expect(after.allocations.find((a) => a.leave_reason === 'returned')).toMatchObject({ end: at(3 * HOUR) });
      expect(after.allocations.find((a) => a.leave_reason === null)).toMatchObject({ end: at(10 * HOUR) });
      expect(after.end).toEqual(at(10 * HOUR));
    });

    it('leaving twice is a conflict; an unknown allocation is not found', async () => {
      const { store, lease } = await setup();
      const l = await lease(0, 10, ['n1', 'n2']);
      const input = { allocation_id: l.allocations[0]!.id, at: at(HOUR), reason: 'returned' as const, cleaning_gap_ms: GAP };
      await store.lifecycle.leave(input, [], at(HOUR));
      await expect(store.lifecycle.leave(input, [], at(HOUR))).rejects.toBeInstanceOf(ConflictError);
      await expect(store.lifecycle.leave({ ...input, allocation_id: '00000000-0000-4000-8000-000000000000' }, [], at(HOUR))).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.lifecycle.leave({ ...input, allocation_id: 'not-a-uuid' }, [], at(HOUR))).rejects.toBeInstanceOf(NotFoundError);
    });
  });

  describe('failures, the replace policy and the owner taking a node back', () => {
    it('a failure is recorded once per kind (true only when it changed, its events only then) and cleared with null', async () => {
      const { store, lease } = await setup();
      const l = await lease(0, 10, ['n1']);
      const id = l.allocations[0]!.id;
      const failure = { kind: 'maintenance', reason: 'node n1 went into maintenance' };
      expect(await store.lifecycle.recordFailure(id, failure, [{ ...event('lease.degraded'), lease_id: l.id }], at(HOUR))).toBe(true);
      expect(await store.lifecycle.recordFailure(id, failure, [{ ...event('lease.degraded'), lease_id: l.id }], at(HOUR))).toBe(false);
      expect((await store.leasing.getLease(l.id))!.allocations[0]!.failure).toBe('node n1 went into maintenance');
      expect(await store.lifecycle.recordFailure(id, null, [{ ...event('lease.node_recovered'), lease_id: l.id }], at(2 * HOUR))).toBe(true);
      expect((await store.leasing.getLease(l.id))!.allocations[0]!.failure).toBeNull();
      const types = (await store.leasing.listEvents({ lease_id: l.id }, { limit: 10, marker: null })).items.map((e) => e.type);
      expect(types.filter((t) => t === 'lease.degraded')).toHaveLength(1);
      expect(types).toContain('lease.node_recovered');
    });

    it('the replace policy is kept per lease', async () => {
      const { store, lease } = await setup();
      const l = await lease(0, 10, ['n1']);
      expect(l.replace_policy).toBe('auto');
      expect((await store.lifecycle.setReplacePolicy(l.id, 'never', [], at(HOUR))).replace_policy).toBe('never');
      expect((await store.leasing.getLease(l.id))!.replace_policy).toBe('never');
      await expect(store.lifecycle.setReplacePolicy('00000000-0000-4000-8000-000000000000', 'ask', [], at(HOUR))).rejects.toBeInstanceOf(NotFoundError);
    });

    it('the allocations on a node past an instant: still in their lease, in start order; none that left or ended before', async () => {
      const { store, lease } = await setup();
      const early = await lease(0, 2, ['n1']);
      const later = await lease(5, 8, ['n1']);
      const running = await lease(2 + GAP / HOUR, 4, ['n1']);
      await store.lifecycle.leave({ allocation_id: running.allocations[0]!.id, at: at(3 * HOUR), reason: 'returned', cleaning_gap_ms: GAP }, [], at(3 * HOUR));
      const held = await store.lifecycle.onNodeAfter('n1', at(2 * HOUR));
      expect(held.map((h) => h.lease.id)).toEqual([later.id]);
      expect((await store.lifecycle.onNodeAfter('n1', at(HOUR))).map((h) => h.lease.id)).toEqual([early.id, later.id]);
      expect(held[0]!.allocation.id).toBe(later.allocations[0]!.id);
    });

    it("closing a node's offers at an instant: the one in force ends there, a later one is withdrawn, other nodes' stay", async () => {
      const { store } = await setup();
      const owners = (await store.findProject('owners'))!;
      const offer = (node_id: string, fromH: number, toH: number | null) =>
        store.leasing.createOffer(
          { node_id, project_id: owners.id, start: at(fromH * HOUR), end: toH === null ? null : at(toH * HOUR), max_lease_ms: null, min_lease_ms: null, allowed_projects: null, created_by: null, reclaim_notice_ms: 86_400_000 },
          [],
          at(0),
        );
      const now = await offer('n1', 0, 10);
      const next = await offer('n1', 20, null);
      const other = await offer('n2', 0, null);
      expect(await store.lifecycle.closeOffers('n1', at(5 * HOUR), [event('node.reclaimed')], at(HOUR))).toBe(2);
      expect(await store.leasing.getOffer(now.id)).toMatchObject({ end: at(5 * HOUR), withdrawn_at: null, reclaim_notice_ms: 86_400_000 });
      expect((await store.leasing.getOffer(next.id))!.withdrawn_at).toEqual(at(HOUR));
      expect(await store.leasing.getOffer(other.id)).toMatchObject({ end: null, withdrawn_at: null });
    });
  });
}
