import { describe, expect, it } from 'vitest';
import { ConflictError, LeaseConflictError } from '../../../src/domain/errors.js';
import type { Lease } from '../../../src/domain/leasing.js';
import { HoldsCopy } from '../../../src/leasing/holds-copy.js';
import { LeasesInForce } from '../../../src/leasing/leases-in-force.js';
import type { Hold } from '../../../src/store/leasing-store.js';
import type { Store } from '../../../src/store/store.js';
import { HOUR, T0, at, nodeRecord, type OpenFreshStore, useFreshStores } from './fixtures.js';

const GAP = HOUR / 2;

/**
 * Sub-leasing, one level (domain/subleasing.ts), in the store: a sub-offer and the sub-leases booked from it live
 * inside the parent allocation's hold (the exclusion constraints are per level), the chain is read back from both
 * ends, and every cut of the parent cuts its sub-leases in the same transaction.
 */
export function subleaseContract(open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  async function world() {
    const store = await fresh();
    const owners = await store.createProject({ name: 'owners' }, T0);
    const astro = await store.createProject({ name: 'astro' }, T0);
    const geo = await store.createProject({ name: 'geo' }, T0);
    const bio = await store.createProject({ name: 'bio' }, T0);
    await store.syncNodes([nodeRecord('n1', { owner: 'owners' })], T0);
    await store.leasing.createOffer({ node_id: 'n1', project_id: owners.id, start: T0, end: null, max_lease_ms: null, min_lease_ms: null, allowed_projects: null, created_by: null }, [], T0);
    const parent = await book(store, astro.id, 0, 10);
    return { store, owners, astro, geo, bio, parent, pa: parent.allocations[0]!.id };
  }

  function book(store: Store, projectId: string, startH: number, endH: number): Promise<Lease> {
    return store.leasing.createLease(
      {
        name: `l-${startH}`,
        project_id: projectId,
        created_by: null,
        start: at(startH * HOUR),
        end: at(endH * HOUR),
        request: { nodes: ['n1'] },
        allocations: [{ node_id: 'n1', group_index: 0 }],
        cleaning_gap_ms: GAP,
        max_nodes: null,
      },
      [{ type: 'lease.created', actor: 'test' }],
      T0,
    );
  }

  function subOffer(store: Store, projectId: string, parent: string, startH: number, endH: number, allowed: string[] | null = null) {
    return store.leasing.createOffer(
      { node_id: 'n1', project_id: projectId, start: at(startH * HOUR), end: at(endH * HOUR), max_lease_ms: null, min_lease_ms: null, allowed_projects: allowed, created_by: null, parent_allocation_id: parent },
      [],
      T0,
    );
  }

  describe('sub-leasing', () => {
    it("a lease inside a sub-offer open to the project becomes a sub-lease of the parent allocation; outside it, the parent's hold refuses it", async () => {
      const { store, astro, geo, bio, parent, pa } = await world();
      const offer = await subOffer(store, astro.id, pa, 2, 6, [geo.id]);
      expect(offer).toMatchObject({ parent_allocation_id: pa, parent_lease_id: parent.id, project_id: astro.id });
      const sub = await book(store, geo.id, 3, 5);
      expect(sub.allocations[0]!.parent_allocation_id).toBe(pa);
      await expect(book(store, bio.id, 3, 5)).rejects.toBeInstanceOf(LeaseConflictError);
      await expect(book(store, geo.id, 5, 7)).rejects.toBeInstanceOf(LeaseConflictError);
      // Two sub-leases of one window never overlap either; right after one, another may start (no cleaning gap).
      await expect(book(store, geo.id, 4, 6)).rejects.toBeInstanceOf(LeaseConflictError);
      expect((await book(store, geo.id, 5, 6)).allocations[0]!.parent_allocation_id).toBe(pa);
      const subleased = (await store.leasing.listEvents({ lease_id: parent.id, type: 'lease.subleased' }, { limit: 10 })).items;
      expect(subleased).toHaveLength(2);
      expect(subleased.find((e) => e.details.sublease_id === sub.id)).toMatchObject({ project_id: astro.id, details: { sublease_id: sub.id, sublessee: geo.id } });
    });

    it('two sub-offers of one window never overlap, though both lie inside the owner\'s offer', async () => {
      const { store, astro, pa } = await world();
      await subOffer(store, astro.id, pa, 2, 6);
      await expect(subOffer(store, astro.id, pa, 5, 8)).rejects.toBeInstanceOf(ConflictError);
    });

    it('reads the chain from both ends: the parent with its sub-leases, the sub-lease with its parent, and what a project holds on a node', async () => {
      const { store, astro, geo, parent, pa } = await world();
      await subOffer(store, astro.id, pa, 2, 6, [geo.id]);
      const sub = await book(store, geo.id, 3, 5);
      const links = await store.subleases.links([pa, sub.allocations[0]!.id]);
      expect(links.get(pa)).toMatchObject({ parent: null, subleases: [{ lease_id: sub.id, project_id: geo.id, project_name: 'geo', start: at(3 * HOUR), end: at(5 * HOUR) }] });
      expect(links.get(sub.allocations[0]!.id)).toMatchObject({ parent: { lease_id: parent.id, project_name: 'astro', end: at(10 * HOUR) }, subleases: [] });
      expect((await store.subleases.heldOnNode('n1', astro.id, T0)).map((a) => [a.id, a.parent_allocation_id])).toEqual([[pa, null]]);
      expect((await store.subleases.heldOnNode('n1', geo.id, T0)).map((a) => a.parent_allocation_id)).toEqual([pa]);
      expect(await store.subleases.heldOnNode('n1', geo.id, at(6 * HOUR))).toEqual([]);
    });

    it('the sub-lessee holds the node during its sub-lease and the lessee does not; before, the lessee does, and after, once the node is wiped', async () => {
      const { store, astro, geo, pa } = await world();
      await subOffer(store, astro.id, pa, 2, 6, [geo.id]);
      const sublease = await book(store, geo.id, 3, 5);
      const holder = async (h: number) => (await store.leasing.currentLeases(['n1'], at(h * HOUR))).get('n1')?.project_id;
      expect([await holder(1), await holder(4), await holder(5)]).toEqual([astro.id, geo.id, undefined]);
      // The engine has cleaned the node after the sub-lease: the lessee has it again.
      await store.tasks.updateAllocation(sublease.allocations[0]!.id, { state: 'released' }, at(5.5 * HOUR));
      expect(await holder(5.5)).toBe(astro.id);
      expect(await store.leasing.leasedNodeIds(astro.id, at(4 * HOUR))).toEqual([]);
      expect((await store.nodeWithLease('n1', at(4 * HOUR)))?.lease?.project_id).toBe(geo.id);
    });

    it("a token's node read and a node's read with its lease, asked again and again, follow the lease in force at each instant and every change at once", async () => {
      const { store, astro, geo, parent, pa } = await world();
      await subOffer(store, astro.id, pa, 2, 6, [geo.id]);
      const sublease = await book(store, geo.id, 3, 5);
      const user = await store.createUser({ name: 'ada', project_id: astro.id, role: 'member' }, T0);
      const token = await store.createToken({ user_id: user.id, token_hash: 'th', prefix: 'p', expires_at: at(9 * HOUR) }, T0);
      // Each read twice in a row (the second may be a kept answer: store/read-cache.ts), against the node and the
      // lease in force read apart, by queries nothing keeps.
      const holder = async (h: number) => {
        const reads = [await store.tokenWithNode('th', 'n1', at(h * HOUR)), await store.tokenWithNode('th', 'n1', at(h * HOUR))];
        const nodeReads = [await store.nodeWithLease('n1', at(h * HOUR)), await store.nodeWithLease('n1', at(h * HOUR))];
        const apart = {
          node: await store.getNode('n1', { kind: 'all' }),
          lease: (await store.leasing.currentLeases(['n1'], at(h * HOUR))).get('n1') ?? null,
        };
        for (const read of nodeReads) expect(read).toEqual(apart);
        for (const read of reads) expect(read?.found ?? null).toEqual(read === null ? null : apart);
        return reads.map((r) => (r === null ? 'refused' : (r.found?.lease?.project_id ?? null)));
      };
      expect(await holder(1)).toEqual([astro.id, astro.id]);
      expect(await holder(2.9)).toEqual([astro.id, astro.id]);
      expect(await holder(3)).toEqual([geo.id, geo.id]);
      expect(await holder(4.999)).toEqual([geo.id, geo.id]);
      expect(await holder(5)).toEqual([null, null]);
      // Nothing but a write changes at 5 h: the node wiped after the sub-lease gives it back to the lessee.
      await store.tasks.updateAllocation(sublease.allocations[0]!.id, { state: 'released' }, at(5 * HOUR));
      expect(await holder(5)).toEqual([astro.id, astro.id]);
      await store.leasing.changeLeaseEnd(parent.id, at(6 * HOUR), GAP, [{ type: 'lease.shortened', actor: 'astro-member', lease_id: parent.id }], at(5 * HOUR));
      expect(await holder(5.5)).toEqual([astro.id, astro.id]);
      expect(await holder(6)).toEqual([null, null]);
      expect(await holder(9)).toEqual(['refused', 'refused']);
      expect(await holder(5.5)).toEqual([astro.id, astro.id]);
      await store.revokeToken(token.id, at(5.5 * HOUR));
      expect(await holder(5.5)).toEqual(['refused', 'refused']);
    });

    it("a replica's copy of the leases in force, asked again and again, follows the lease at each instant and every change at once", async () => {
      const { store, astro, geo, parent, pa } = await world();
      await subOffer(store, astro.id, pa, 2, 6, [geo.id]);
      const sublease = await book(store, geo.id, 3, 5);
      // Two replicas' copies: one asked at every step, one only now and then; both against a fresh read.
      const often = new LeasesInForce(store);
      const seldom = new LeasesInForce(store);
      const holder = async (h: number, copies: LeasesInForce[] = [often]) => {
        const fresh = (await store.leasing.currentLeases(['n1'], at(h * HOUR))).get('n1') ?? null;
        const answers: (string | null)[] = [];
        for (const copy of copies) {
          for (let i = 0; i < 2; i++) {
            const answer = (await copy.at(['n1'], at(h * HOUR)))[0]!;
            expect(answer.lease).toEqual(fresh);
            answers.push(answer.lease === null ? null : `${answer.lessee_name}`);
          }
        }
        return answers;
      };
      expect(await holder(1, [often, seldom])).toEqual(['astro', 'astro', 'astro', 'astro']);
      expect(await holder(2.9)).toEqual(['astro', 'astro']);
      expect(await holder(3)).toEqual(['geo', 'geo']);
      expect(await holder(4.999)).toEqual(['geo', 'geo']);
      expect(await holder(5)).toEqual([null, null]);
      // Nothing but a write changes at 5 h: the node wiped after the sub-lease gives it back to the lessee.
      await store.tasks.updateAllocation(sublease.allocations[0]!.id, { state: 'released' }, at(5 * HOUR));
      expect(await holder(5)).toEqual(['astro', 'astro']);
      await store.updateProject(astro.id, { name: 'astronomy' }, at(5 * HOUR));
      expect(await holder(5.2)).toEqual(['astronomy', 'astronomy']);
      await store.leasing.changeLeaseEnd(parent.id, at(6 * HOUR), GAP, [{ type: 'lease.shortened', actor: 'astro-member', lease_id: parent.id }], at(5 * HOUR));
      const shortened = (await often.at(['n1'], at(5.5 * HOUR)))[0]!;
      expect(shortened.lease?.end).toEqual(at(6 * HOUR));
      expect(shortened.until).toBe(at(6 * HOUR).getTime());
      expect(await holder(6)).toEqual([null, null]);
      expect(await holder(5.5, [often, seldom])).toEqual(['astronomy', 'astronomy', 'astronomy', 'astronomy']);
      await store.tasks.quarantineNode('n1', 'cleaning failed', at(5.5 * HOUR));
      expect(await holder(5.6, [often, seldom])).toEqual([null, null, null, null]);
    });

    it("a replica's copy of the windows held on a node, asked again and again, equals a fresh read across bookings, cuts and time", async () => {
      const { store, astro, geo, parent, pa } = await world();
      const copy = new HoldsCopy(store);
      const shape = (holds: readonly Hold[]) => holds.map((h) => [h.lease_id, h.start.getTime(), h.blocked_until.getTime(), h.sub === true]);
      const same = async (h: number) => {
        const fresh = shape(await store.leasing.holds(['n1'], at(h * HOUR), null));
        for (let i = 0; i < 2; i++) expect(shape(await copy.from(['n1', 'n1'], at(h * HOUR)))).toEqual(fresh);
        return fresh.length;
      };
      expect(await same(1)).toBe(1);
      await subOffer(store, astro.id, pa, 2, 6, [geo.id]);
      const sub = await book(store, geo.id, 3, 5);
      expect(await same(1)).toBe(2);
      const later = await book(store, geo.id, 12, 14);
      expect(await same(2)).toBe(3);
      // Time alone: the sub-lease's window over, then the parent's (with its cleaning gap).
      expect(await same(5.5)).toBe(2);
      expect(await same(10.4)).toBe(2);
      expect(await same(10.5)).toBe(1);
      await store.leasing.cancelLease(later.id, [{ type: 'lease.cancelled', actor: 'geo-member', lease_id: later.id }], at(10.5 * HOUR));
      expect(await same(10.5)).toBe(0);
      // Asked again for an earlier instant, and after a cut: still a fresh read's answer.
      expect(await same(4)).toBe(2);
      await store.leasing.changeLeaseEnd(parent.id, at(4.5 * HOUR), GAP, [{ type: 'lease.shortened', actor: 'astro-member', lease_id: parent.id }], at(4 * HOUR));
      expect(await same(4)).toBe(2);
      expect((await copy.from(['n1'], at(4 * HOUR))).find((h) => h.lease_id === sub.id)?.blocked_until).toEqual(at(4.5 * HOUR));
    });

    it('shortening the parent cuts a running sub-lease at the new end, cancels one not begun, ends its sub-offer there, in one change', async () => {
      const { store, astro, geo, parent, pa } = await world();
      await subOffer(store, astro.id, pa, 2, 9, [geo.id]);
      const running = await book(store, geo.id, 3, 6);
      const later = await book(store, geo.id, 7, 8);
      await store.leasing.changeLeaseEnd(parent.id, at(4 * HOUR), GAP, [{ type: 'lease.shortened', actor: 'astro-member', lease_id: parent.id }], at(3.5 * HOUR));
      const cut = (await store.leasing.getLease(running.id))!;
      expect([cut.end, cut.allocations[0]!.end]).toEqual([at(4 * HOUR), at(4 * HOUR)]);
      expect((await store.leasing.getLease(later.id))!.state).toBe('cancelled');
      const [offer] = (await store.leasing.offersInForce(['n1'], T0, null)).filter((o) => o.parent_allocation_id === pa);
      expect(offer!.end).toEqual(at(4 * HOUR));
      const ended = (await store.leasing.listEvents({ lease_id: running.id, type: 'lease.sublease_ended' }, { limit: 10 })).items;
      expect(ended[0]).toMatchObject({ actor: 'astro-member', project_id: geo.id, details: { parent_lease_id: parent.id } });
    });

    it('the node leaving the parent lease (returned) ends its sub-lease at that instant; a sub-lease over by then is left alone', async () => {
      const { store, astro, geo, pa } = await world();
      await subOffer(store, astro.id, pa, 1, 9, [geo.id]);
      const over = await book(store, geo.id, 1, 2);
      const running = await book(store, geo.id, 3, 6);
      await store.lifecycle.leave({ allocation_id: pa, at: at(4 * HOUR), reason: 'returned', cleaning_gap_ms: GAP }, [{ type: 'lease.node_returned', actor: 'astro-member' }], at(4 * HOUR));
      expect((await store.leasing.getLease(running.id))!.end).toEqual(at(4 * HOUR));
      expect((await store.leasing.getLease(over.id))!.end).toEqual(at(2 * HOUR));
    });

    it('cancelling a parent that never began cancels its sub-leases with it', async () => {
      const { store, astro, geo } = await world();
      const upcoming = await store.leasing.createLease(
        { name: 'up', project_id: astro.id, created_by: null, start: at(20 * HOUR), end: at(30 * HOUR), request: { nodes: ['n1'] }, allocations: [{ node_id: 'n1', group_index: 0 }], cleaning_gap_ms: GAP, max_nodes: null },
        [],
        T0,
      );
      await subOffer(store, astro.id, upcoming.allocations[0]!.id, 21, 25, [geo.id]);
      const sub = await book(store, geo.id, 22, 24);
      await store.leasing.cancelLease(upcoming.id, [{ type: 'lease.cancelled', actor: 'astro-member', lease_id: upcoming.id }], T0);
      expect((await store.leasing.getLease(sub.id))!.state).toBe('cancelled');
      expect((await store.subleases.links([upcoming.allocations[0]!.id])).get(upcoming.allocations[0]!.id)).toBeUndefined();
    });
  });
}
