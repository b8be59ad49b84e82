import { describe, expect, it } from 'vitest';
import type { AllocationWrite } from '../../../src/store/engine-store.js';
import type { Store } from '../../../src/store/store.js';
import { HOUR, at, nodeRecord, type OpenFreshStore, useFreshStores } from './fixtures.js';

/**
 * The engine's batch calls (store.tasks.updateAllocations, settleTasks, allocationContexts; store.upsertNodes):
 * many tasks' work in one transaction, each task still fenced by its own claim.
 */
export function engineBatchContract(open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  async function setup(nodeCount: number) {
    const store = await fresh();
    await store.createProject({ name: 'owners' }, at(0));
    const lessee = await store.createProject({ name: 'lessees' }, at(0));
    const nodes = Array.from({ length: nodeCount }, (_, i) => `n${i + 1}`);
    await store.syncNodes(nodes.map((id) => nodeRecord(id, { owner: 'owners' })), at(0));
    const lease = (on: readonly string[]) =>
      store.leasing.createLease(
        {
          name: 'l',
          project_id: lessee.id,
          created_by: null,
          start: at(HOUR),
          end: at(3 * HOUR),
          request: { nodes: on },
          allocations: on.map((node_id) => ({ node_id, group_index: 0 })),
          cleaning_gap_ms: 0,
          max_nodes: null,
        },
        [],
        at(0),
      );
    return { store, lessee, lease };
  }

  /** A lease's events, oldest first. */
  const events = async (store: Store, leaseId: string) =>
    [...(await store.leasing.listEvents({ lease_id: leaseId }, { limit: 100 })).items].sort((a, b) => Number(a.seq) - Number(b.seq));
  const engineEvent = (type: string) => ({ type, actor: 'engine', message: type });

  describe('engine batches', () => {
    it('a batch of writes records every allocation whose claim is held and refuses only the one whose claim was lost', async () => {
      const { store, lease } = await setup(3);
      const leases = [await lease(['n1']), await lease(['n2']), await lease(['n3'])];
      const tasks = await store.tasks.claimDueTasks('w1', at(HOUR), 10, 1_000);
      expect(tasks).toHaveLength(3);
      // The second lease's task is taken over by another worker (w1 stalled past its claim).
      const lost = tasks.find((t) => t.lease_id === leases[1]!.id)!;
      await store.tasks.retryTask(lost.id, at(HOUR), null, at(HOUR), 'w1');
      expect((await store.tasks.claimDueTasks('w2', at(HOUR), 10, 60_000)).map((t) => t.id)).toEqual([lost.id]);

      const writes: AllocationWrite[] = tasks.map((t) => ({
        id: t.allocation_id,
        patch: { state: 'active' },
        events: [engineEvent('allocation.started')],
        claim: { taskId: t.id, worker: 'w1' },
        at: at(HOUR + 10),
      }));
      const unknown: AllocationWrite = { id: '00000000-0000-4000-8000-000000000000', patch: { state: 'active' }, events: [], at: at(HOUR) };
      const results = await store.tasks.updateAllocations([...writes, unknown], at(HOUR + 10));
      expect(results).toEqual([...tasks.map((t) => (t.id === lost.id ? 'claim_lost' : 'written')), 'not_found']);

      for (const l of leases) {
        const after = (await store.leasing.getLease(l.id))!;
        const types = (await events(store, l.id)).map((e) => e.type);
        if (l.id === lost.lease_id) {
          expect(after.allocations[0]!.state).toBe('reserved');
          expect(types).not.toContain('allocation.started');
        } else {
          expect(after.state).toBe('active');
          expect(after.allocations[0]!.state).toBe('active');
          expect(types).toEqual(expect.arrayContaining(['allocation.started', 'lease.active']));
        }
      }
    });

    it("a lease's state changes in a batch are the ones the writes made one by one would give, each after its cause", async () => {
      const { store, lease } = await setup(2);
      const l = await lease(['n1', 'n2']);
      const [a1, a2] = l.allocations.map((a) => a.id);
      const write = (id: string, state: string, type: string): AllocationWrite => ({ id, patch: { state: state as never }, events: [engineEvent(type)], at: at(HOUR) });
      await store.tasks.updateAllocations([write(a1!, 'active', 'allocation.started'), write(a2!, 'active', 'allocation.started')], at(HOUR));
      await store.tasks.updateAllocations(
        [
          write(a1!, 'releasing', 'allocation.releasing'),
          write(a2!, 'releasing', 'allocation.releasing'),
          write(a1!, 'released', 'allocation.released'),
          write(a2!, 'released', 'allocation.released'),
        ],
        at(2 * HOUR),
      );
      expect((await store.leasing.getLease(l.id))!.state).toBe('ended');
      const seen = (await events(store, l.id)).map((e) => `${e.type}${e.node_id ? ` ${e.node_id}` : ''}`);
      expect(seen).toEqual([
        'allocation.started n1',
        'allocation.started n2',
        'lease.active',
        'allocation.releasing n1',
        'lease.ending',
        'allocation.releasing n2',
        'allocation.released n1',
        'allocation.released n2',
        'lease.ended',
      ]);
      const ended = (await events(store, l.id)).find((e) => e.type === 'lease.ended')!;
      expect(ended).toMatchObject({ actor: 'engine', node_id: null, details: { from: 'ending', to: 'ended' } });
    });

    it('settling a batch completes and re-schedules the tasks whose claims are held, and none whose claim was lost', async () => {
      const { store, lease } = await setup(3);
      for (const n of ['n1', 'n2', 'n3']) await lease([n]);
      const [t1, t2, t3] = await store.tasks.claimDueTasks('w1', at(HOUR), 10, 60_000);
      const changed = await store.tasks.settleTasks(
        [
          { id: t1!.id, claimedBy: 'w1', outcome: { kind: 'done' } },
          { id: t2!.id, claimedBy: 'w1', outcome: { kind: 'retry', dueAt: at(HOUR + 5_000), error: 'busy' } },
          { id: t3!.id, claimedBy: 'someone-else', outcome: { kind: 'done' } },
        ],
        at(HOUR),
      );
      expect(changed).toEqual([true, true, false]);
      // t1 is done for good, t2 due again at its retry time with the attempt counted, t3 still w1's.
      expect(await store.tasks.claimDueTasks('w2', at(HOUR + 4_999), 10, 60_000)).toEqual([]);
      expect(await store.tasks.claimDueTasks('w2', at(HOUR + 5_000), 10, 60_000)).toMatchObject([{ id: t2!.id, attempts: 1, last_error: 'busy' }]);
      expect(await store.tasks.settleTasks([{ id: t1!.id, outcome: { kind: 'retry', dueAt: at(HOUR), error: null } }], at(HOUR))).toEqual([false]);
    });

    it('reads many allocations with their leases in one call, leaving out those that do not exist', async () => {
      const { store, lease } = await setup(2);
      const l1 = await lease(['n1']);
      const l2 = await lease(['n2']);
      const missing = '00000000-0000-4000-8000-000000000000';
      const found = await store.tasks.allocationContexts([l1.allocations[0]!.id, l2.allocations[0]!.id, missing, 'not-a-uuid']);
      expect(found.size).toBe(2);
      expect(found.get(l1.allocations[0]!.id)).toMatchObject({ allocation: { node_id: 'n1' }, lease: { id: l1.id } });
      expect(found.get(l2.allocations[0]!.id)).toMatchObject({ allocation: { node_id: 'n2' }, lease: { id: l2.id } });
    });

    it('records many nodes in one call, a node named twice as its last record', async () => {
      const store = await fresh();
      const written = await store.upsertNodes(
        [nodeRecord('a', { provision_state: 'cleaning' }), nodeRecord('b'), nodeRecord('a', { provision_state: 'available' })],
        at(1),
      );
      expect(written.map((n) => [n.id, n.provision_state])).toEqual([
        ['a', 'available'],
        ['b', 'available'],
        ['a', 'available'],
      ]);
      expect(await store.getNode('a', { kind: 'all' })).toMatchObject({ provision_state: 'available' });
    });
  });
}
