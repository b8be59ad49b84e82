import { describe, expect, it } from 'vitest';
import { NotFoundError } from '../../../src/domain/errors.js';
import type { Store } from '../../../src/store/store.js';
import { HOUR, at, nodeRecord, type OpenFreshStore, useFreshStores } from './fixtures.js';

/** The EngineStore part of the contract (store.tasks): due tasks, claims, allocation progress, quarantine. */
export function engineContract(open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  async function setup(nodeCount = 2) {
    const store = await fresh();
    const owner = await store.createProject({ name: 'owners' }, at(0));
    const lessee = await store.createProject({ name: 'lessees' }, at(0));
    const nodes = Array.from({ length: nodeCount }, (_, i) => `n${i + 1}`);
    await store.syncNodes(nodes.map((id) => nodeRecord(id, { owner: 'owners' })), at(0));
    const lease = (startH: number, endH: number, on: readonly string[]) =>
      store.leasing.createLease(
        {
          name: 'l',
          project_id: lessee.id,
          created_by: null,
          start: at(startH * HOUR),
          end: at(endH * HOUR),
          request: { nodes: on },
          allocations: on.map((node_id) => ({ node_id, group_index: 0 })),
          cleaning_gap_ms: 0,
          max_nodes: null,
        },
        [],
        at(0),
      );
    return { store, owner, lessee, nodes, lease };
  }

  const claim = (store: Store, worker: string, atMs: number, limit = 10, claimMs = 60_000) =>
    store.tasks.claimDueTasks(worker, at(atMs), limit, claimMs);
  const ids = (tasks: readonly { id: string }[]) => tasks.map((t) => t.id);

  describe('engine tasks', () => {
    it('claims due tasks in due order up to the limit, and none before they are due', async () => {
      const { store, lease } = await setup();
      const a = await lease(1, 3, ['n1']);
      const b = await lease(2, 3, ['n2']);
      expect(await claim(store, 'w1', HOUR - 1)).toEqual([]);
      const [first, ...rest] = await claim(store, 'w1', 2 * HOUR, 1);
      expect(rest).toEqual([]);
      expect(first).toEqual({
        id: expect.any(String),
        lease_id: a.id,
        allocation_id: a.allocations[0]!.id,
        kind: 'start',
        due_at: at(HOUR),
        attempts: 0,
        last_error: null,
      });
      expect(await claim(store, 'w1', 2 * HOUR)).toMatchObject([{ lease_id: b.id, kind: 'start' }]);
    });

    it('a small lease starting beside a large one has all its starts claimed first, the large one\'s in due order after', async () => {
      const { store, nodes, lease } = await setup(30);
      const large = await lease(1, 3, nodes.slice(0, 26));
      const small = await lease(1, 3, nodes.slice(26));
      const claimed = await claim(store, 'w1', HOUR, 12);
      expect(claimed.map((t) => t.lease_id)).toEqual([...Array(4).fill(small.id), ...Array(8).fill(large.id)]);
      expect(new Set(claimed.slice(0, 4).map((t) => t.allocation_id))).toEqual(new Set(small.allocations.map((a) => a.id)));
    });

    it('a claimed task is claimed by no one else until its claim expires, then by another worker', async () => {
      const { store, lease } = await setup();
      await lease(1, 3, ['n1']);
      const [task] = await claim(store, 'w1', HOUR, 10, 1_000);
      expect(task).toBeDefined();
      expect(await claim(store, 'w2', HOUR + 999)).toEqual([]);
      expect(ids(await claim(store, 'w2', HOUR + 1_000))).toEqual([task!.id]);
    });

    it("a worker's heartbeat extends its live claims, and does not revive a claim that already expired", async () => {
      const { store, lease } = await setup();
      await lease(1, 3, ['n1']);
      await lease(1, 3, ['n2']);
      const [first, second] = await claim(store, 'w1', HOUR, 10, 5_000);
      expect(await store.tasks.renewClaims('w1', at(HOUR + 4_000), 5_000)).toBe(2);
      expect(await store.tasks.renewClaims('w2', at(HOUR + 4_000), 5_000)).toBe(0);
      // Renewed until 9 s past the hour: still held at 8.999 s.
      expect(await claim(store, 'w2', HOUR + 8_999)).toEqual([]);
      await store.tasks.completeTask(first!.id, at(HOUR + 8_999), 'w1');
      // No beat in time: the claim expires and another worker takes the task; a late beat does not take it back.
      expect(ids(await claim(store, 'w2', HOUR + 9_000))).toEqual([second!.id]);
      expect(await store.tasks.renewClaims('w1', at(HOUR + 9_500), 5_000)).toBe(0);
      expect(await claim(store, 'w3', HOUR + 13_999)).toEqual([]);
    });

    it('a worker whose claim was taken over can neither complete nor re-schedule the task, nor record progress on it', async () => {
      const { store, lease } = await setup();
      const l = await lease(1, 3, ['n1']);
      const allocationId = l.allocations[0]!.id;
      const [task] = await claim(store, 'stalled', HOUR, 10, 1_000);
      expect(ids(await claim(store, 'fresh', HOUR + 1_000))).toEqual([task!.id]);

      expect(await store.tasks.completeTask(task!.id, at(HOUR + 1_500), 'stalled')).toBe(false);
      expect(await store.tasks.retryTask(task!.id, at(HOUR + 1_500), 'late', at(HOUR + 1_500), 'stalled')).toBe(false);
      const event = { type: 'allocation.started', actor: 'engine', message: 'stale' };
      await expect(
        store.tasks.updateAllocation(allocationId, { state: 'active' }, at(HOUR + 1_500), [event], { taskId: task!.id, worker: 'stalled' }),
      ).rejects.toMatchObject({ name: 'ClaimLostError', code: 'conflict' });
      const after = await store.leasing.getLease(l.id);
      expect(after!.allocations[0]!.state).toBe('reserved');
      expect((await store.leasing.listEvents({ lease_id: l.id }, { limit: 100 })).items.map((e) => e.type)).not.toContain('allocation.started');

      // The worker holding the claim records and completes as usual.
      await store.tasks.updateAllocation(allocationId, { state: 'active' }, at(HOUR + 1_500), [], { taskId: task!.id, worker: 'fresh' });
      expect(await store.tasks.completeTask(task!.id, at(HOUR + 1_500), 'fresh')).toBe(true);
      expect((await store.leasing.getLease(l.id))!.allocations[0]!.state).toBe('active');
    });

    it('workers claiming at the same moment never receive one task twice', async () => {
      const { store, lease } = await setup(10);
      for (let i = 1; i <= 10; i++) await lease(1, 3, [`n${i}`]);
      const seen: string[] = [];
      for (let round = 0; round < 10 && seen.length < 10; round++) {
        const results = await Promise.all(Array.from({ length: 5 }, (_, w) => claim(store, `w${w}`, HOUR, 3)));
        seen.push(...results.flatMap(ids));
      }
      expect(seen).toHaveLength(10);
      expect(new Set(seen).size).toBe(10);
    });

    it('a completed task is never claimed again; completing or retrying it again changes nothing', async () => {
      const { store, lease } = await setup();
      await lease(1, 3, ['n1']);
      const [task] = await claim(store, 'w1', HOUR);
      await store.tasks.completeTask(task!.id, at(HOUR));
      await store.tasks.retryTask(task!.id, at(HOUR), 'late', at(HOUR));
      await store.tasks.completeTask(task!.id, at(HOUR));
      expect(await claim(store, 'w1', 2 * HOUR)).toEqual([]);
      expect(await store.tasks.nextDueAt()).toEqual(at(3 * HOUR));
    });

    it('a retried task is due again at the given time, with the attempt counted and the error kept', async () => {
      const { store, lease } = await setup();
      await lease(1, 3, ['n1']);
      const [task] = await claim(store, 'w1', HOUR);
      await store.tasks.retryTask(task!.id, at(HOUR + 5_000), 'node is locked', at(HOUR));
      expect(await claim(store, 'w2', HOUR + 4_999)).toEqual([]);
      expect(await claim(store, 'w2', HOUR + 5_000)).toMatchObject([{ id: task!.id, attempts: 1, last_error: 'node is locked' }]);
      await store.tasks.retryTask(task!.id, at(HOUR + 6_000), null, at(HOUR + 5_000));
      expect(await claim(store, 'w2', HOUR + 6_000)).toMatchObject([{ id: task!.id, attempts: 2, last_error: null }]);
    });

    it('nextDueAt is the earliest unfinished task, a claimed one counting from its claim expiry; null when none', async () => {
      const { store, lease } = await setup();
      expect(await store.tasks.nextDueAt()).toBeNull();
      await lease(1, 3, ['n1']);
      expect(await store.tasks.nextDueAt()).toEqual(at(HOUR));
      const [task] = await claim(store, 'w1', HOUR + 10, 10, 60_000);
      expect(await store.tasks.nextDueAt()).toEqual(at(HOUR + 10 + 60_000));
      await store.tasks.completeTask(task!.id, at(HOUR + 20));
      expect(await store.tasks.nextDueAt()).toEqual(at(3 * HOUR));
    });

    it('an end task waits for its allocation start task', async () => {
      const { store, lease } = await setup();
      await lease(1, 2, ['n1']);
      const [start, ...others] = await claim(store, 'w1', 3 * HOUR);
      expect(start?.kind).toBe('start');
      expect(others).toEqual([]);
      expect(await claim(store, 'w2', 3 * HOUR + 59_999)).toEqual([]);
      // The end (due at 2 h) does not count for the next wake-up while it waits: the start's claim expiry does.
      expect(await store.tasks.nextDueAt()).toEqual(at(3 * HOUR + 60_000));
      await store.tasks.completeTask(start!.id, at(3 * HOUR));
      expect(await claim(store, 'w1', 3 * HOUR)).toMatchObject([{ kind: 'end' }]);
    });

    it('a start task waits while an earlier allocation on its node is unfinished', async () => {
      const { store, lease } = await setup();
      const a = await lease(1, 2, ['n1']);
      const b = await lease(2, 3, ['n1']);
      const allocA = a.allocations[0]!.id;
      const [startA] = await claim(store, 'w1', HOUR);
      await store.tasks.updateAllocation(allocA, { state: 'active' }, at(HOUR));
      await store.tasks.completeTask(startA!.id, at(HOUR));
      const [endA, ...blocked] = await claim(store, 'w1', 2 * HOUR);
      expect(endA).toMatchObject({ lease_id: a.id, kind: 'end' });
      expect(blocked).toEqual([]);
      await store.tasks.updateAllocation(allocA, { state: 'releasing', step: 'wait_available' }, at(2 * HOUR));
      await store.tasks.retryTask(endA!.id, at(2 * HOUR + 1_000), null, at(2 * HOUR));
      expect(await claim(store, 'w1', 2 * HOUR + 500)).toEqual([]);
      await store.tasks.updateAllocation(allocA, { state: 'released', step: null }, at(2 * HOUR + 1_000));
      // Both due now, in due order: the next lease's start (due at 2 h), then the retried end.
      expect(await claim(store, 'w1', 2 * HOUR + 1_000)).toMatchObject([{ lease_id: b.id, kind: 'start' }, { lease_id: a.id, kind: 'end' }]);
    });

    it('a start task on a quarantined node waits, until its allocation end passes', async () => {
      const { store, lease } = await setup();
      await lease(1, 2, ['n1']);
      await store.tasks.quarantineNode('n1', 'clean failed', at(0));
      expect(await claim(store, 'w1', HOUR)).toEqual([]);
      expect(await store.tasks.nextDueAt()).toBeNull();
      expect(await claim(store, 'w1', 2 * HOUR)).toMatchObject([{ kind: 'start' }]);
    });
  });

  describe('allocation progress', () => {
    it('gives an allocation with its lease; null for an unknown allocation', async () => {
      const { store, lease, lessee } = await setup();
      const l = await lease(1, 2, ['n1']);
      const context = await store.tasks.getAllocationContext(l.allocations[0]!.id);
      expect(context?.allocation).toEqual(l.allocations[0]);
      expect(context?.lease).toMatchObject({ id: l.id, project_id: lessee.id, state: 'pending', start: at(HOUR), end: at(2 * HOUR) });
      expect(context?.lease).not.toHaveProperty('allocations');
      expect(await store.tasks.getAllocationContext('00000000-0000-4000-8000-000000000000')).toBeNull();
      expect(await store.tasks.getAllocationContext('not-a-uuid')).toBeNull();
    });

    it('records progress with its events as the engine and derives the lease state in the same step', async () => {
      const { store, lease, lessee, owner } = await setup();
      const l = await lease(1, 2, ['n1', 'n2']);
      const [a1, a2] = l.allocations.map((a) => a.id);
      const stateOf = async () => (await store.leasing.getLease(l.id))!.state;
      const events = async () => [...(await store.leasing.listEvents({ lease_id: l.id }, { limit: 100 })).items].reverse();

      await store.tasks.updateAllocation(a1!, { state: 'active' }, at(HOUR), [
        { type: 'allocation.started', actor: 'engine', message: 'handed over' },
      ]);
      expect(await stateOf()).toBe('pending');
      expect(await events()).toMatchObject([
        {
          type: 'allocation.started',
          actor: 'engine',
          actor_user_id: null,
          outcome: 'ok',
          at: at(HOUR),
          lease_id: l.id,
          node_id: l.allocations[0]!.node_id,
          project_id: lessee.id,
          owner_project_id: owner.id,
          message: 'handed over',
        },
      ]);

      await store.tasks.updateAllocation(a2!, { state: 'active' }, at(HOUR + 1));
      expect(await stateOf()).toBe('active');
      expect((await events()).map((e) => e.type)).toEqual(['allocation.started', 'lease.active']);

      await store.tasks.updateAllocation(a1!, { state: 'releasing', step: 'clear_lessee', last_error: 'x' }, at(2 * HOUR));
      expect(await stateOf()).toBe('ending');
      const allocation = (await store.tasks.getAllocationContext(a1!))!.allocation;
      expect(allocation).toMatchObject({ state: 'releasing', step: 'clear_lessee', last_error: 'x', updated_at: at(2 * HOUR) });
      await store.tasks.updateAllocation(a1!, { step: null, last_error: null }, at(2 * HOUR));
      expect((await store.tasks.getAllocationContext(a1!))!.allocation).toMatchObject({ state: 'releasing', step: null, last_error: null });

      await store.tasks.updateAllocation(a1!, { state: 'released' }, at(2 * HOUR + 1));
      expect(await stateOf()).toBe('ending');
      await store.tasks.updateAllocation(a2!, { state: 'quarantined' }, at(2 * HOUR + 2));
      expect(await stateOf()).toBe('ended');
      expect((await events()).map((e) => e.type)).toEqual(['allocation.started', 'lease.active', 'lease.ending', 'lease.ended']);
    });

    it('a lease none of whose allocations could start has failed', async () => {
      const { store, lease } = await setup();
      const l = await lease(1, 2, ['n1']);
      await store.tasks.updateAllocation(l.allocations[0]!.id, { state: 'cancelled', last_error: 'node gone' }, at(HOUR));
      expect((await store.leasing.getLease(l.id))!.state).toBe('failed');
    });

    it('updating an unknown allocation is NotFoundError', async () => {
      const { store } = await setup();
      await expect(store.tasks.updateAllocation('00000000-0000-4000-8000-000000000000', { state: 'active' }, at(0))).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.tasks.updateAllocation('nope', { state: 'active' }, at(0))).rejects.toBeInstanceOf(NotFoundError);
    });

    it('quarantines a node with the reason, keeping the time it was first quarantined', async () => {
      const { store } = await setup();
      await store.tasks.quarantineNode('n1', 'clean failed: disk erase', at(5));
      await store.tasks.quarantineNode('n1', 'clean failed again', at(9));
      expect(await store.getNode('n1', { kind: 'all' })).toMatchObject({ quarantined_at: at(5), quarantine_reason: 'clean failed again' });
      await expect(store.tasks.quarantineNode('missing', 'x', at(0))).rejects.toBeInstanceOf(NotFoundError);
    });
  });

  describe('reconciliation', () => {
    it('lists every unfinished allocation with its lessee, times and maintenance mark, and no finished one', async () => {
      const { store, lessee, lease } = await setup();
      const a = await lease(1, 3, ['n1']);
      const b = await lease(4, 5, ['n2']);
      await store.tasks.updateAllocation(b.allocations[0]!.id, { state: 'released' }, at(HOUR));
      await store.tasks.updateAllocation(a.allocations[0]!.id, { state: 'active', node_maintenance_at: at(2 * HOUR) }, at(2 * HOUR));
      expect(await store.tasks.holdings()).toEqual([
        {
          allocation_id: a.allocations[0]!.id,
          lease_id: a.id,
          project_id: lessee.id,
          node_id: 'n1',
          state: 'active',
          start: at(HOUR),
          end: at(3 * HOUR),
          lease_cancelled: false,
          node_maintenance_at: at(2 * HOUR),
          left: false,
          failure_kind: null,
          node_quarantined: false,
          sublease: false,
        },
      ]);
    });

    it('node events carry the node and its owner project, so the owner sees them', async () => {
      const { store, owner } = await setup();
      await store.tasks.recordNodeEvents('n1', [{ type: 'reconcile.lessee_cleared', actor: 'engine', message: 'cleared' }], at(7));
      const page = await store.leasing.listEvents({ visible_to: owner.id }, { limit: 10 });
      expect(page.items.map((e) => [e.type, e.node_id, e.owner_project_id, e.at])).toEqual([['reconcile.lessee_cleared', 'n1', owner.id, at(7)]]);
    });

    it('a leader lease has one holder until it expires or is dropped', async () => {
      const { store } = await setup();
      expect(await store.tasks.tryLeaderLease('job', 'a', at(0), 1_000)).toBe(true);
      expect(await store.tasks.tryLeaderLease('job', 'b', at(500), 1_000)).toBe(false);
      expect(await store.tasks.tryLeaderLease('job', 'a', at(500), 1_000)).toBe(true); // renewed to 1500
      expect(await store.tasks.tryLeaderLease('job', 'b', at(1_200), 1_000)).toBe(false);
      expect(await store.tasks.tryLeaderLease('job', 'b', at(1_500), 1_000)).toBe(true); // expired: taken over
      await store.tasks.dropLeaderLease('job', 'a'); // not a's any more: nothing happens
      expect(await store.tasks.tryLeaderLease('job', 'a', at(1_600), 1_000)).toBe(false);
      await store.tasks.dropLeaderLease('job', 'b');
      expect(await store.tasks.tryLeaderLease('job', 'a', at(1_600), 1_000)).toBe(true);
    });

    it('retryNow makes failed tasks waiting out a backoff due now, leaving waits, claimed and done tasks alone', async () => {
      const { store, lease } = await setup(3);
      const a = await lease(1, 2, ['n1']);
      const b = await lease(1, 2, ['n2']);
      const c = await lease(1, 2, ['n3']);
      const [ta, tb, tc] = [a, b, c].map((l) => l.id);
      const tasks = await claim(store, 'w', HOUR, 10);
      const byLease = (id: string) => tasks.find((t) => t.lease_id === id)!.id;
      await store.tasks.retryTask(byLease(ta!), at(HOUR + 60_000), 'Ironic unreachable', at(HOUR));
      await store.tasks.retryTask(byLease(tb!), at(HOUR + 60_000), null, at(HOUR)); // waiting for cleaning
      await store.tasks.completeTask(byLease(tc!), at(HOUR));
      expect(await store.tasks.retryNow(at(HOUR + 1_000))).toBe(1);
      expect(ids(await claim(store, 'w', HOUR + 1_000, 10))).toEqual([byLease(ta!)]);
    });
  });
}
