import { describe, expect, it } from 'vitest';
import { HOUR, at, nodeRecord, type OpenFreshStore, useFreshStores } from './fixtures.js';

/** store.leasing.availabilityBookings: the bookings behind the availability timeline, with lease and lessee names. */
export function availabilityContract(open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  async function setup() {
    const store = await fresh();
    await store.createProject({ name: 'owners' }, at(0));
    const astro = await store.createProject({ name: 'astro' }, at(0));
    const geo = await store.createProject({ name: 'geo' }, at(0));
    await store.syncNodes(['n1', 'n2'].map((id) => nodeRecord(id, { owner: 'owners' })), at(0));
    const lease = (project: string, name: string, startH: number, endH: number, on: readonly string[]) =>
      store.leasing.createLease(
        {
          name,
          project_id: project,
          created_by: null,
          start: at(startH * HOUR),
          end: at(endH * HOUR),
          request: { nodes: on },
          allocations: on.map((node_id) => ({ node_id, group_index: 0 })),
          cleaning_gap_ms: HOUR / 2,
          max_nodes: null,
        },
        [],
        at(0),
      );
    return { store, astro, geo, lease };
  }

  describe('availability bookings', () => {
    it('lists the bookings whose blocked window overlaps [from, to), with lease, state and lessee names, by node then start', async () => {
      const { store, astro, geo, lease } = await setup();
      const a = await lease(astro.id, 'astro-run', 1, 3, ['n1', 'n2']);
      const g = await lease(geo.id, 'geo-run', 5, 6, ['n1']);
      await lease(geo.id, 'later', 20, 21, ['n2']);
      const rows = await store.leasing.availabilityBookings({ from: at(3 * HOUR), to: at(10 * HOUR) });
      expect(rows).toEqual([
        {
          node_id: 'n1',
          lease_id: a.id,
          lease_name: 'astro-run',
          lease_state: 'pending',
          project_id: astro.id,
          project_name: 'astro',
          allocation_state: 'reserved',
          start: at(HOUR),
          end: at(3 * HOUR),
          blocked_until: at(3.5 * HOUR),
        },
        expect.objectContaining({ node_id: 'n1', lease_id: g.id, lease_name: 'geo-run', project_name: 'geo', start: at(5 * HOUR) }),
        expect.objectContaining({ node_id: 'n2', lease_id: a.id }),
      ]);
    });

    it('narrows to nodes and to one project; an empty node list is no bookings; cancelled leases hold nothing', async () => {
      const { store, astro, geo, lease } = await setup();
      const a = await lease(astro.id, 'astro-run', 1, 3, ['n1', 'n2']);
      await lease(geo.id, 'geo-run', 5, 6, ['n1']);
      const window = { from: at(0), to: at(24 * HOUR) };
      expect((await store.leasing.availabilityBookings({ ...window, nodeIds: ['n2'] })).map((b) => b.lease_name)).toEqual(['astro-run']);
      expect((await store.leasing.availabilityBookings({ ...window, projectId: geo.id })).map((b) => b.node_id)).toEqual(['n1']);
      expect(await store.leasing.availabilityBookings({ ...window, nodeIds: [] })).toEqual([]);
      await store.leasing.cancelLease(a.id, [], at(0));
      expect((await store.leasing.availabilityBookings(window)).map((b) => b.lease_name)).toEqual(['geo-run']);
    });
  });
}
