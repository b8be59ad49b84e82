import { describe, expect, it } from 'vitest';
import { LeaseConflictError, LeaseUnavailableError } from '../../../src/domain/errors.js';
import { ManualClock } from '../../../src/domain/manual-clock.js';
import { LeasePlanner } from '../../../src/leasing/lease-planner.js';
import { LeaseService } from '../../../src/leasing/lease-service.js';
import { PendingBookings, WaitForPendingBookings } from '../../../src/leasing/pending-bookings.js';
import { PlanningIndex } from '../../../src/leasing/planning-index.js';
import type { NewLease } from '../../../src/store/leasing-store.js';
import type { Store } from '../../../src/store/store.js';
import { HOUR, T0, at, nodeRecord, type OpenFreshStore, useFreshStores } from './fixtures.js';

const GAP = HOUR / 2;

/**
 * What planning reads (issue 15): the changes that keep each replica's planning index current, the holds of a few
 * candidates, the free intervals the earliest-start search sweeps, bookings that replace taken nodes with the
 * next best, and the planner over them (candidate widening, the earliest start).
 */
export function planningContract(open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  const owned = (id: string, more: Parameters<typeof nodeRecord>[1] = {}) => nodeRecord(id, { owner: 'owners', ...more });

  async function pool(ids: readonly string[], memoryGiB: (i: number) => number = () => 64) {
    const store = await fresh();
    const owners = await store.createProject({ name: 'owners' }, T0);
    const lessee = await store.createProject({ name: 'lessee' }, T0);
    await store.syncNodes(
      ids.map((id, i) => owned(id, { facts: { memory: memoryGiB(i) * 2 ** 30, cpus: 8, gpus: 0 } })),
      T0,
    );
    return { store, owners, lessee };
  }

  function lease(store: Store, projectId: string, nodes: readonly string[], startH: number, endH: number, more: Partial<NewLease> = {}) {
    return store.leasing.createLease(
      {
        name: `l-${nodes.join('-')}-${startH}`,
        project_id: projectId,
        created_by: null,
        start: at(startH * HOUR),
        end: at(endH * HOUR),
        request: { nodes },
        allocations: nodes.map((node_id) => ({ node_id, group_index: 0 })),
        cleaning_gap_ms: GAP,
        max_nodes: null,
        ...more,
      },
      [],
      T0,
    );
  }

  describe('planning changes', () => {
    it('returns everything without a watermark, then only what was written since: a node whose maintenance changed, a withdrawn offer, a removed node', async () => {
      const store = await fresh();
      const owners = await store.createProject({ name: 'owners' }, T0);
      await store.syncNodes([owned('n1'), owned('n2'), owned('n3')], T0);
      const offer = await store.leasing.createOffer(
        { node_id: 'n1', project_id: owners.id, start: T0, end: null, max_lease_ms: null, min_lease_ms: null, allowed_projects: null, created_by: null },
        [],
        T0,
      );
      const all = await store.planningChanges(null);
      expect(all.full).toBe(true);
      expect(all.nodes.map((c) => c.node.id).sort()).toEqual(['n1', 'n2', 'n3']);
      expect(all.nodes[0]!.node).toMatchObject({ owner_project: { id: owners.id, name: 'owners' }, maintenance: false });
      expect(all.offers.map((o) => o.id)).toEqual([offer.id]);

      // The watermark is the oldest transaction running anywhere on the server (PostgreSQL's xids are cluster-wide):
      // while another database's transaction is open, a look's watermark can lie below what that look returned, and
      // it comes again in the next (never missed). Settling looks again from each new watermark until a look finds
      // nothing (up to 20 s; at once on PGlite); from that watermark every stamp is older, so the next look is exact.
      const settle = async (since: string) => {
        for (let tries = 0; ; tries++) {
          const changes = await store.planningChanges(since);
          expect(changes.full).toBe(false);
          if (changes.nodes.length === 0 && changes.offers.length === 0) return changes.watermark;
          expect(changes.nodes.every((c) => ['n1', 'n2', 'n3'].includes(c.node.id))).toBe(true);
          expect(tries, 'the watermark never passed what this test wrote').toBeLessThan(400);
          since = changes.watermark;
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      const settled = await settle(all.watermark);

      // A sync that changes only what planning does not read (the power state, the sync time) is not a change.
      await store.syncNodes([owned('n1', { power_state: 'power on' }), owned('n2', { maintenance: true }), owned('n3')], at(HOUR));
      await store.leasing.withdrawOffer(offer.id, [], at(HOUR));
      const some = await store.planningChanges(settled);
      expect(some.nodes.map((c) => [c.node.id, c.node.maintenance, c.removed])).toEqual([['n2', true, false]]);
      expect(some.offers.map((o) => [o.id, o.withdrawn_at !== null])).toEqual([[offer.id, true]]);

      await store.syncNodes([owned('n1', { power_state: 'power on' })], at(2 * HOUR));
      const removed = await store.planningChanges(some.watermark);
      expect(removed.nodes.filter((c) => c.removed).map((c) => c.node.id).sort()).toEqual(['n2', 'n3']);
    }, 40_000);

    it('a project created under the name a node names as owner makes that node change owner for planning', async () => {
      const store = await fresh();
      await store.syncNodes([nodeRecord('n1', { owner: 'later-lab' })], T0);
      const first = await store.planningChanges(null);
      expect(first.nodes[0]!.node.owner_project).toBeNull();
      const project = await store.createProject({ name: 'later-lab' }, at(1));
      const next = await store.planningChanges(first.watermark);
      expect(next.nodes.map((c) => c.node.owner_project)).toEqual([{ id: project.id, name: 'later-lab' }]);
    });

    it('keeps a planning index equal to the tables: quarantine and new nodes show after a refresh, removed ones are gone', async () => {
      const { store } = await pool(['n1', 'n2']);
      const index = new PlanningIndex(store);
      await index.refresh();
      expect(index.byCost().map((n) => n.id)).toEqual(['n1', 'n2']);
      await store.tasks.quarantineNode('n1', 'clean failed', at(1));
      await store.syncNodes([owned('n1'), owned('n9', { name: 'alpha' })], at(2));
      await index.refresh();
      expect(index.byCost().map((n) => n.id).sort()).toEqual(['n1', 'n9']);
      expect(index.find('n1')?.quarantined_at).toEqual(at(1));
      expect(index.find('alpha')?.id).toBe('n9');
      expect(index.find('n2')).toBeUndefined();
    });
  });

  describe('holds and free starts', () => {
    it('reads the windows held on some nodes overlapping [from, to), cleaning gap included; no nodes is no holds', async () => {
      const { store, lessee } = await pool(['n1', 'n2']);
      const a = await lease(store, lessee.id, ['n1'], 1, 3);
      await lease(store, lessee.id, ['n2'], 10, 12);
      expect(await store.leasing.holds(['n1', 'n2'], at(3 * HOUR), at(5 * HOUR))).toEqual([
        { node_id: 'n1', lease_id: a.id, start: at(HOUR), blocked_until: at(3.5 * HOUR), sub: false },
      ]);
      expect(await store.leasing.holds([], at(0), null)).toEqual([]);
    });

    it('reads the same holds for a long list of nodes (one scan) as for a short one (a lookup per node), with an open end', async () => {
      const { store, lessee } = await pool(['n1', 'n2', 'n3']);
      const a = await lease(store, lessee.id, ['n1', 'n3'], 1, 3);
      const b = await lease(store, lessee.id, ['n3'], 10, 12);
      // 1,200 ids, most of them naming no node: past the lookups' limit (planning-holds.ts).
      const long = [...Array.from({ length: 1_200 }, (_, i) => `missing-${i}`), 'n3', 'n2', 'n1'];
      const expected = [
        { node_id: 'n1', lease_id: a.id, start: at(HOUR), blocked_until: at(3.5 * HOUR), sub: false },
        { node_id: 'n3', lease_id: a.id, start: at(HOUR), blocked_until: at(3.5 * HOUR), sub: false },
        { node_id: 'n3', lease_id: b.id, start: at(10 * HOUR), blocked_until: at(12.5 * HOUR), sub: false },
      ];
      expect(await store.leasing.holds(['n3', 'n2', 'n1'], at(2 * HOUR), null)).toEqual(expected);
      expect(await store.leasing.holds(long, at(2 * HOUR), null)).toEqual(expected);
    });

    it('gives per node the instants a window plus its gap can start at: between holds, shortened by the span, inclusive', async () => {
      const { store, lessee } = await pool(['n1', 'n2']);
      await lease(store, lessee.id, ['n1'], 4, 6); // blocked [4 h, 6.5 h)
      await lease(store, lessee.id, ['n1'], 10, 11); // blocked [10 h, 11.5 h)
      const free = await store.leasing.freeStarts(['n1', 'n2'], at(0), at(24 * HOUR), 2 * HOUR);
      expect(free).toEqual(
        expect.arrayContaining([
          {
            node_id: 'n1',
            starts: [
              { start: at(0).getTime(), end: at(2 * HOUR).getTime() },
              { start: at(6.5 * HOUR).getTime(), end: at(8 * HOUR).getTime() },
              { start: at(11.5 * HOUR).getTime(), end: at(24 * HOUR).getTime() },
            ],
          },
          { node_id: 'n2', starts: [{ start: at(0).getTime(), end: at(24 * HOUR).getTime() }] },
        ]),
      );
      // A gap shorter than the span is no start at all.
      const long = await store.leasing.freeStarts(['n1'], at(5 * HOUR), at(9 * HOUR), 4 * HOUR);
      expect(long).toEqual([{ node_id: 'n1', starts: [] }]);
    });
  });

  describe('booking with alternatives', () => {
    it('books the next best free node of the group when a chosen one was taken meanwhile', async () => {
      const { store, lessee } = await pool(['n1', 'n2', 'n3']);
      await lease(store, lessee.id, ['n1'], 1, 5); // taken meanwhile
      const booked = await lease(store, lessee.id, ['n1', 'n2'], 2, 4, { alternatives: [['n1', 'n2', 'n3']] });
      expect(booked.allocations.map((a) => a.node_id).sort()).toEqual(['n2', 'n3']);
    });

    it('matches groups over what it holds, and fails with lease_conflict only once the alternatives run out', async () => {
      const { store, lessee } = await pool(['n1', 'n2', 'n3']);
      await lease(store, lessee.id, ['n2'], 1, 5);
      // Group 0 may use n1 or n2, group 1 only n1 or n3: n2 is taken, so group 0 must get n1 and group 1 n3.
      const booked = await lease(store, lessee.id, ['n2', 'n1'], 2, 4, {
        allocations: [
          { node_id: 'n2', group_index: 0 },
          { node_id: 'n1', group_index: 1 },
        ],
        alternatives: [['n2', 'n1'], ['n1', 'n3']],
      });
      expect(booked.allocations.map((a) => [a.group_index, a.node_id])).toEqual([
        [0, 'n1'],
        [1, 'n3'],
      ]);
      await expect(lease(store, lessee.id, ['n1'], 2, 3, { alternatives: [['n1', 'n2', 'n3']] })).rejects.toBeInstanceOf(LeaseConflictError);
    });
  });

  describe('planner', () => {
    it('widens past its first candidates when the best fits are all booked, and still picks the smallest free one', async () => {
      // 40 nodes; the 30 smallest are booked over the window: the first look (4 × 1 + 8 = 12) finds none free.
      const ids = Array.from({ length: 40 }, (_, i) => `n${String(i).padStart(2, '0')}`);
      const { store, lessee } = await pool(ids, (i) => 16 + i);
      for (const id of ids.slice(0, 30)) await lease(store, lessee.id, [id], 1, 30);
      const planner = new LeasePlanner(store, new ManualClock(T0), { cleaningGapMs: GAP });
      // The owner leases its own nodes (no offer needed).
      const owners = (await store.findProject('owners'))!;
      const plan = await planner.plan(owners, { start: at(2 * HOUR), durationMs: 2 * HOUR, groups: [{ count: 1, where: 'memory >= 16GiB' }] });
      expect(plan.allocations).toEqual([{ node_id: 'n30', group_index: 0 }]);
      expect(plan.alternatives[0]!.slice(0, 3)).toEqual(['n30', 'n31', 'n32']);
    });

    it('answers the earliest start the free intervals allow when the window is taken', async () => {
      const { store, lessee } = await pool(['n1', 'n2']);
      await lease(store, lessee.id, ['n1'], 1, 10); // blocked until 10.5 h
      await lease(store, lessee.id, ['n2'], 1, 20); // blocked until 20.5 h
      const planner = new LeasePlanner(store, new ManualClock(T0), { cleaningGapMs: GAP });
      const owners = (await store.findProject('owners'))!;
      const ask = { start: at(2 * HOUR), durationMs: 2 * HOUR, groups: [{ count: 2, where: 'memory >= 16GiB' }] };
      const refusal = await planner.plan(owners, ask).catch((err: unknown) => err);
      expect(refusal).toBeInstanceOf(LeaseUnavailableError);
      expect((refusal as LeaseUnavailableError).details).toMatchObject({ earliest_start: at(20.5 * HOUR).toISOString() });
      expect((refusal as LeaseUnavailableError).details.groups).toEqual([expect.objectContaining({ matching: 2, free: 0, taken: ['node-n1', 'node-n2'] })]);
      const one = await planner.plan(owners, { ...ask, groups: [{ count: 1, where: 'memory >= 16GiB' }] }).catch((err: unknown) => err);
      expect((one as LeaseUnavailableError).details).toMatchObject({ earliest_start: at(10.5 * HOUR).toISOString() });
    });

    it('steps around the nodes other bookings are taking, and holds its own choice until released', async () => {
      const { store } = await pool(['n1', 'n2', 'n3']);
      const planner = new LeasePlanner(store, new ManualClock(T0), { cleaningGapMs: GAP });
      const owners = (await store.findProject('owners'))!;
      const pending = new PendingBookings();
      const ask = { start: at(2 * HOUR), durationMs: 2 * HOUR, groups: [{ count: 1, where: 'memory >= 16GiB' }] };
      const first = await planner.plan(owners, ask, pending);
      const second = await planner.plan(owners, ask, pending);
      expect([first.allocations[0]!.node_id, second.allocations[0]!.node_id]).toEqual(['n1', 'n2']);
      // A quote does not see bookings under way: it answers what the tables hold.
      expect((await planner.plan(owners, ask)).allocations[0]!.node_id).toBe('n1');
      first.hold!.release();
      expect((await planner.plan(owners, ask, pending)).allocations[0]!.node_id).toBe('n1');
      second.hold!.release();
    });

    it('waits for bookings under way when only their nodes could serve it, instead of refusing', async () => {
      const { store } = await pool(['n1', 'n2']);
      const planner = new LeasePlanner(store, new ManualClock(T0), { cleaningGapMs: GAP });
      const owners = (await store.findProject('owners'))!;
      const pending = new PendingBookings();
      const ask = { start: at(2 * HOUR), durationMs: 2 * HOUR, groups: [{ count: 2, where: 'memory >= 16GiB' }] };
      const under = await planner.plan(owners, ask, pending);
      const waiting = await planner.plan(owners, ask, pending).catch((err: unknown) => err);
      expect(waiting).toBeInstanceOf(WaitForPendingBookings);
      let settled = false;
      void (waiting as WaitForPendingBookings).settled.then(() => (settled = true));
      await Promise.resolve();
      expect(settled).toBe(false);
      under.hold!.release();
      await (waiting as WaitForPendingBookings).settled;
      // Another window does not wait for them.
      const later = { ...ask, start: at(10 * HOUR) };
      const again = await planner.plan(owners, ask, pending);
      await expect(planner.plan(owners, later, pending)).resolves.toMatchObject({ allocations: [{ node_id: 'n1' }, { node_id: 'n2' }] });
      again.hold!.release();
    });
  });

  describe('concurrent bookings', () => {
    it('grants every request the nodes allow when many ask at once, each refusal a lease_unavailable with the earliest start', async () => {
      const ids = Array.from({ length: 8 }, (_, i) => `n${i}`);
      const { store } = await pool(ids);
      const owners = (await store.findProject('owners'))!;
      const service = new LeaseService(store, new ManualClock(T0), { cleaningGapMs: GAP });
      const actor = { userName: 'owner', userId: 'owner', source: 'keystone' as const };
      const ask = { start: at(2 * HOUR), durationMs: 2 * HOUR, groups: [{ count: 2, where: 'memory >= 16GiB' }] };
      const outcomes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => service.create(owners, ask, { name: `race-${i}`, actor })));
      const granted = outcomes.filter((o) => o.status === 'fulfilled').map((o) => (o as PromiseFulfilledResult<Awaited<ReturnType<LeaseService['create']>>>).value);
      const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason);
      expect(granted).toHaveLength(4);
      expect(new Set(granted.flatMap((l) => l.allocations.map((a) => a.node_id))).size).toBe(8);
      expect(refused).toHaveLength(8);
      for (const err of refused) {
        expect(err).toBeInstanceOf(LeaseUnavailableError);
        expect((err as LeaseUnavailableError).details).toMatchObject({ earliest_start: at(4.5 * HOUR).toISOString() });
      }
    });
  });
}
