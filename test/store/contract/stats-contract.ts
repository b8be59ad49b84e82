import { describe, expect, it } from 'vitest';
import { HOUR, at, nodeRecord, type OpenFreshStore, useFreshStores } from './fixtures.js';

/** The StatsStore part of the contract (store.stats): the counts the metrics read at scrape time. */
export function statsContract(open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  describe('counts for the metrics', () => {
    it('an empty store counts nothing, and its pool has room', async () => {
      const store = await fresh();
      expect(await store.stats.leasesByState()).toEqual(new Map());
      expect(await store.stats.allocationsByState()).toEqual(new Map());
      expect(await store.stats.nodesByState()).toEqual([]);
      const pool = store.stats.pool();
      expect(pool.max).toBeGreaterThanOrEqual(1);
      expect(pool.waiting).toBe(0);
    });

    it('between queries no connection is in use or awaited, and the one just used stays open and idle', async () => {
      const store = await fresh();
      await store.ping();
      const pool = store.stats.pool();
      // PostgreSQL: the pg pool of 10 keeps the connection; PGlite: its one session, free again.
      expect(pool).toMatchObject({ in_use: 0, waiting: 0 });
      expect(pool.idle).toBeGreaterThanOrEqual(1);
      expect(pool.max).toBe(store.engine === 'postgres' ? 10 : 1);
    });

    it('counts leases and allocations by state, as a cancel and an allocation going active change them', async () => {
      const store = await fresh();
      const project = await store.createProject({ name: 'lessees' }, at(0));
      await store.syncNodes(['n1', 'n2', 'n3'].map((id) => nodeRecord(id)), at(0));
      const lease = (on: readonly string[], startH: number) =>
        store.leasing.createLease(
          { name: 'l', project_id: project.id, created_by: null, start: at(startH * HOUR), end: at((startH + 2) * HOUR), request: { nodes: on }, allocations: on.map((node_id) => ({ node_id, group_index: 0 })), cleaning_gap_ms: 0, max_nodes: null },
          [],
          at(0),
        );
      const running = await lease(['n1', 'n2'], 0);
      const cancelled = await lease(['n3'], 5);
      await lease(['n3'], 10);
      await store.leasing.cancelLease(cancelled.id, [], at(1));
      for (const a of running.allocations) await store.tasks.updateAllocation(a.id, { state: 'active' }, at(1));
      expect(await store.stats.leasesByState()).toEqual(new Map([['active', 1], ['cancelled', 1], ['pending', 1]]));
      expect(await store.stats.allocationsByState()).toEqual(new Map([['active', 2], ['cancelled', 1], ['reserved', 1]]));
    });

    it('counts live nodes by provision state and quarantine, leaving removed nodes out', async () => {
      const store = await fresh();
      await store.syncNodes([nodeRecord('a'), nodeRecord('b'), nodeRecord('c'), nodeRecord('d', { provision_state: 'cleaning' }), nodeRecord('gone')], at(0));
      await store.syncNodes([nodeRecord('a'), nodeRecord('b'), nodeRecord('c'), nodeRecord('d', { provision_state: 'cleaning' })], at(1));
      await store.tasks.quarantineNode('b', 'clean failed', at(2));
      expect(await store.stats.nodesByState()).toEqual([
        { provision_state: 'available', quarantined: false, count: 2 },
        { provision_state: 'available', quarantined: true, count: 1 },
        { provision_state: 'cleaning', quarantined: false, count: 1 },
      ]);
    });
  });
}
