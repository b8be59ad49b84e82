import { describe, expect, it } from 'vitest';
import { LeaseOrder } from '../../../src/store/leasing-store.js';
import { HOUR, allPages, at, nodeRecord, type OpenFreshStore, useFreshStores } from './fixtures.js';

/** LeasingStore.listLeases: its two orders, each walked page by page with markers. */
export function leaseListContract(open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  /** Five leases on five nodes: created one hour apart (the last two in the same instant), starting in reverse order. */
  async function setup() {
    const store = await fresh();
    const lessee = await store.createProject({ name: 'lessees' }, at(0));
    const nodes = ['n1', 'n2', 'n3', 'n4', 'n5'];
    await store.syncNodes(nodes.map((id) => nodeRecord(id)), at(0));
    const created: { id: string; name: string }[] = [];
    const createdAt = [1, 2, 3, 4, 4];
    for (const [i, node] of nodes.entries()) {
      const startH = 100 - i * 10;
      const lease = await store.leasing.createLease(
        {
          name: `l${i + 1}`,
          project_id: lessee.id,
          created_by: null,
          start: at(startH * HOUR),
          end: at((startH + 5) * HOUR),
          request: { nodes: [node] },
          allocations: [{ node_id: node, group_index: 0 }],
          cleaning_gap_ms: 0,
          max_nodes: null,
        },
        [],
        at(createdAt[i]! * HOUR),
      );
      created.push({ id: lease.id, name: lease.name });
    }
    return { store, created };
  }

  describe('lease lists', () => {
    it('lists by start, earliest first, by default', async () => {
      const { store } = await setup();
      const page = await store.leasing.listLeases({}, { limit: 10 });
      expect(page.items.map((l) => l.name)).toEqual(['l5', 'l4', 'l3', 'l2', 'l1']);
    });

    it('lists newest first by creation, leases created in the same instant by id descending, the same across pages of any size', async () => {
      const { store, created } = await setup();
      const sameInstant = created.slice(3).sort((a, b) => (a.id < b.id ? 1 : -1)).map((l) => l.name);
      const expected = [...sameInstant, 'l3', 'l2', 'l1'];
      const whole = await store.leasing.listLeases({}, { limit: 10 }, LeaseOrder.Newest);
      expect(whole.items.map((l) => l.name)).toEqual(expected);
      expect(whole.nextMarker).toBeNull();
      for (const limit of [1, 2, 3]) {
        const pages = await allPages((marker) => store.leasing.listLeases({}, { limit, marker }, LeaseOrder.Newest));
        expect(pages.flat().map((l) => l.name)).toEqual(expected);
        expect(pages.every((p) => p.length <= limit)).toBe(true);
      }
    });

    it('a marker of one order continues after that lease in the other order too', async () => {
      const { store, created } = await setup();
      const l3 = created[2]!.id;
      expect((await store.leasing.listLeases({}, { limit: 10, marker: l3 }, LeaseOrder.Newest)).items.map((l) => l.name)).toEqual(['l2', 'l1']);
      expect((await store.leasing.listLeases({}, { limit: 10, marker: l3 })).items.map((l) => l.name)).toEqual(['l2', 'l1']);
    });
  });
}
