import { describe, expect, it } from 'vitest';
import { HOUR, at, nodeRecord, type OpenFreshStore, useFreshStores } from './fixtures.js';

const GAP = 10 * 60_000;

/**
 * The UsageStore part of the contract (store.usage, migration 0014): what each allocation actually had, when its
 * node was handed over, and what it was when booked.
 */
export function usageContract(open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  async function setup() {
    const store = await fresh();
    const owners = await store.createProject({ name: 'owners' }, at(0));
    const lessee = await store.createProject({ name: 'lessees' }, at(0));
    const other = await store.createProject({ name: 'others' }, at(0));
    await store.syncNodes(['n1', 'n2'].map((id) => nodeRecord(id, { owner: 'owners' })), at(0));
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
    const all = { from: at(0), to: at(48 * HOUR) };
    return { store, owners, lessee, other, lease, all };
  }

  describe('usage spans', () => {
    it('records node, owner, class and the price of the offer in force at the start, as they were when booked', async () => {
      const { store, owners, lessee, lease, all } = await setup();
      await store.leasing.createOffer(
        { node_id: 'n1', project_id: owners.id, start: at(0), end: null, max_lease_ms: null, min_lease_ms: null, allowed_projects: null, created_by: null, price_per_node_hour: '2.5', currency: 'EUR' },
        [],
        at(0),
      );
      await lease(1, 3, ['n1']);
      // The node changes hands and class afterwards: the record keeps what it was.
      await store.syncNodes([nodeRecord('n1', { owner: 'others', resource_class: 'baremetal.cpu' }), nodeRecord('n2', { owner: 'owners' })], at(HOUR));
      const spans = await store.usage.spans(all, at(10 * HOUR));
      expect(spans).toEqual([
        expect.objectContaining({
          node_id: 'n1',
          node_name: 'node-n1',
          project_id: lessee.id,
          project_name: 'lessees',
          owner_project_id: owners.id,
          owner_name: 'owners',
          resource_class: 'baremetal.gpu',
          price_per_node_hour: '2.5000',
          currency: 'EUR',
          start: at(HOUR).getTime(),
          end: at(3 * HOUR).getTime(),
        }),
      ]);
    });

    it("a lease waiting for the previous one's cleaning has no use until the node is released, then from that instant", async () => {
      const { store, lease, all } = await setup();
      const first = await lease(0, 2, ['n1']);
      const second = await lease(3, 6, ['n1']);
      await store.tasks.updateAllocation(first.allocations[0]!.id, { state: 'releasing' }, at(2 * HOUR));
      expect((await store.usage.spans(all, at(4 * HOUR))).map((s) => s.allocation_id)).toEqual([first.allocations[0]!.id]);
      await store.tasks.updateAllocation(first.allocations[0]!.id, { state: 'released' }, at(4 * HOUR + 1234));
      const spans = await store.usage.spans(all, at(10 * HOUR));
      expect(spans.find((s) => s.allocation_id === second.allocations[0]!.id)).toMatchObject({ start: at(4 * HOUR + 1234).getTime(), end: at(6 * HOUR).getTime() });
    });

    it('a node quarantined after a failed cleaning holds the next lease back until the quarantine is cleared', async () => {
      const { store, lease, all } = await setup();
      const first = await lease(0, 2, ['n1']);
      const second = await lease(3, 6, ['n1']);
      await store.tasks.quarantineNode('n1', 'clean failed', at(2 * HOUR));
      await store.tasks.updateAllocation(first.allocations[0]!.id, { state: 'quarantined' }, at(2 * HOUR));
      expect(await store.usage.spans({ ...all, from: at(3 * HOUR) }, at(4 * HOUR))).toEqual([]);
      await store.leasing.clearQuarantine('n1', [], at(5 * HOUR));
      expect(await store.usage.spans({ ...all, from: at(3 * HOUR) }, at(10 * HOUR))).toEqual([
        expect.objectContaining({ allocation_id: second.allocations[0]!.id, start: at(5 * HOUR).getTime(), end: at(6 * HOUR).getTime() }),
      ]);
    });

    it('a node replaced mid-lease counts to the instant it left, the substitute from then; a cancelled lease counts nothing', async () => {
      const { store, lease, all } = await setup();
      const l = await lease(0, 4, ['n1']);
      await store.lifecycle.leave({ allocation_id: l.allocations[0]!.id, node_id: 'n2', at: at(HOUR), reason: 'replaced', cleaning_gap_ms: GAP }, [], at(HOUR));
      const cancelled = await lease(10, 12, ['n2']);
      await store.leasing.cancelLease(cancelled.id, [], at(HOUR));
      const spans = await store.usage.spans(all, at(20 * HOUR));
      expect(spans.map((s) => [s.node_id, s.start, s.end])).toEqual([
        ['n1', at(0).getTime(), at(HOUR).getTime()],
        ['n2', at(HOUR).getTime(), at(4 * HOUR).getTime()],
      ]);
    });

    it('an allocation the engine dropped while it held its node (the node vanished) counts until it was dropped', async () => {
      const { store, lease, all } = await setup();
      const l = await lease(0, 4, ['n1']);
      await store.tasks.updateAllocation(l.allocations[0]!.id, { state: 'cancelled', last_error: 'node n1 no longer exists in Ironic' }, at(90 * 60_000));
      expect((await store.usage.spans(all, at(10 * HOUR))).map((s) => [s.start, s.end])).toEqual([[at(0).getTime(), at(90 * 60_000).getTime()]]);
    });

    it('filters by lessee and by owner, and reads only allocations overlapping the window', async () => {
      const { store, owners, lessee, other, lease, all } = await setup();
      await lease(0, 2, ['n1']);
      await lease(0, 2, ['n2'], other.id);
      expect((await store.usage.spans({ ...all, lessee_project_id: lessee.id }, at(10 * HOUR))).map((s) => s.node_id)).toEqual(['n1']);
      expect(await store.usage.spans({ ...all, owner_project_id: lessee.id }, at(10 * HOUR))).toEqual([]);
      expect(await store.usage.spans({ ...all, owner_project_id: owners.id }, at(10 * HOUR))).toHaveLength(2);
      expect(await store.usage.spans({ from: at(2 * HOUR), to: at(3 * HOUR) }, at(10 * HOUR))).toEqual([]);
    });
  });
}
