import { describe, expect, it } from 'vitest';
import type { Store } from '../../../src/store/store.js';
import { at, HOUR, nodeRecord, T0, type OpenFreshStore, useFreshStores } from './fixtures.js';

/** A hex digit no id in `ids` starts with: a prefix that must match nothing. */
function unusedFirstDigit(ids: readonly string[]): string {
  return [...'0123456789abcdef'].find((d) => !ids.some((id) => id.startsWith(d)))!;
}

/**
 * Looking things up the way people type them (the CLI's resolver): the short id prefix tables print, and a lease's
 * or a user's exact name, as list filters — so the server answers with the few that match, never the whole list.
 */
export function lookupContract(open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  async function setup(store: Store) {
    const owners = await store.createProject({ name: 'owners' }, T0);
    const astro = await store.createProject({ name: 'astro' }, T0);
    const ids = ['aa11aa11-0000-4000-8000-000000000001', 'aa12aa12-0000-4000-8000-000000000002', 'bb00bb00-0000-4000-8000-000000000003'];
    await store.syncNodes(ids.map((id, i) => nodeRecord(id, { name: `n${i}`, owner: 'owners' })), T0);
    const lease = (name: string, startH: number, node: string) =>
      store.leasing.createLease(
        {
          name,
          project_id: astro.id,
          created_by: null,
          start: at(startH * HOUR),
          end: at((startH + 1) * HOUR),
          request: { nodes: [node] },
          allocations: [{ node_id: node, group_index: 0 }],
          cleaning_gap_ms: 0,
          max_nodes: null,
        },
        [],
        T0,
      );
    return { owners, astro, ids, lease };
  }

  describe('lookups by name and id prefix', () => {
    it('lists the nodes whose id starts with a prefix, in any case, on the node list and its versions page', async () => {
      const store = await fresh();
      const { ids } = await setup(store);
      const listed = async (id_prefix: string) => (await store.listNodes({ id_prefix }, { kind: 'all' }, { limit: 10 })).items.map((n) => n.id);
      expect(await listed('aa1')).toEqual([ids[0], ids[1]]);
      expect(await listed('AA12')).toEqual([ids[1]]);
      expect(await listed(ids[2]!)).toEqual([ids[2]]);
      expect(await listed('c')).toEqual([]);
      // The versions page (the API's node list) filters alike.
      const versions = await store.listNodeVersions({ id_prefix: 'aa1' }, { kind: 'all' }, { limit: 10 });
      expect(versions.items.map((v) => v.id)).toEqual([ids[0], ids[1]]);
    });

    it("the leases in force give each node's lease at an instant with its project's name and when that next changes, and none before its start or from its end", async () => {
      const store = await fresh();
      const { astro, ids, lease } = await setup(store);
      const leased = await lease('nightly', 1, ids[0]!);
      const inForce = async (t: Date) => {
        const answers = await store.leasesInForce([...ids, ids[0]!, 'nope'], t);
        expect(answers).toHaveLength(ids.length + 1);
        const byId = new Map(answers.map((a) => [a.node_id, a]));
        return [...ids, 'nope'].map((id) => byId.get(id)!);
      };
      const during = await inForce(at(HOUR + 1));
      expect(during.map((v) => [v.node_id, v.lease?.lease_id ?? null, v.lessee_name])).toEqual([
        [ids[0], leased.id, 'astro'],
        [ids[1], null, null],
        [ids[2], null, null],
        ['nope', null, null],
      ]);
      expect(during[0]!.lease).toEqual({ lease_id: leased.id, project_id: astro.id, end: at(2 * HOUR) });
      expect(during.map((v) => v.until)).toEqual([at(2 * HOUR).getTime(), Infinity, Infinity, Infinity]);
      const before = await inForce(at(HOUR - 1));
      expect(before.map((v) => v.lessee_name)).toEqual([null, null, null, null]);
      expect(before[0]!.until).toBe(at(HOUR).getTime());
      expect((await inForce(at(2 * HOUR))).map((v) => v.lease)).toEqual([null, null, null, null]);
      expect(await store.leasesInForce([], T0)).toEqual([]);
    });

    it('the changes to the leases in force name every node and renamed project written since the watermark, and nothing when nothing was', async () => {
      const store = await fresh();
      const { owners, astro, ids, lease } = await setup(store);
      const first = await store.leaseInForceChanges(null);
      expect(first).toMatchObject({ full: true, nodeIds: [], projectIds: [] });
      // The watermark is the oldest transaction running anywhere on the server (PostgreSQL's xids are cluster-wide):
      // while another database's transaction is open, a look's watermark can lie below writes that look already
      // returned, and they come again in the next (never missed). So before each write the test settles: it looks
      // again from each new watermark until a look finds nothing (up to 20 s; at once on PGlite), every repeat only
      // of what it wrote. From a settled watermark every stamp is older, so the look after the write is exact.
      const written = { nodes: new Set<string>(), projects: new Set<string>() };
      let watermark = first.watermark;
      const settle = async () => {
        for (let tries = 0; ; tries++) {
          const changes = await store.leaseInForceChanges(watermark);
          watermark = changes.watermark;
          if (changes.nodeIds.length === 0 && changes.projectIds.length === 0) return;
          expect(changes.nodeIds.filter((id) => !written.nodes.has(id))).toEqual([]);
          expect(changes.projectIds.filter((id) => !written.projects.has(id))).toEqual([]);
          expect(tries, 'the watermark never passed what this test wrote').toBeLessThan(400);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      const step = async (write: () => Promise<unknown>, nodes: readonly string[], projects: readonly string[] = []) => {
        await settle();
        await write();
        const changes = await store.leaseInForceChanges(watermark);
        expect(changes.full).toBe(false);
        expect({ nodes: [...new Set(changes.nodeIds)].sort(), projects: [...new Set(changes.projectIds)].sort() }).toEqual({
          nodes: [...nodes].sort(),
          projects: [...projects].sort(),
        });
        for (const id of nodes) written.nodes.add(id);
        for (const id of projects) written.projects.add(id);
        watermark = changes.watermark;
      };
      for (const id of ids) written.nodes.add(id);
      written.projects.add(astro.id).add(owners.id);
      const nothing = async () => undefined;
      await step(nothing, []);
      let leased: { id: string } | undefined;
      await step(async () => (leased = await lease('nightly', 1, ids[0]!)), [ids[0]!]);
      await step(() => store.leasing.cancelLease(leased!.id, [{ type: 'lease.cancelled', actor: 'test', lease_id: leased!.id }], T0), [ids[0]!]);
      await step(() => store.tasks.quarantineNode(ids[2]!, 'cleaning failed', T0), [ids[2]!]);
      await step(() => store.updateProject(astro.id, { description: 'only the description' }, T0), []);
      await step(() => store.updateProject(astro.id, { name: 'astronomy' }, T0), [], [astro.id]);
      await step(nothing, []);
    }, 60_000);

    it('the versions page (folded into one JSON value by the database) keeps the node order, names, instants and filters of the node list', async () => {
      const store = await fresh();
      const { ids, lease } = await setup(store);
      const odd = await store.createProject({ name: 'lab "β" \\ ü' }, T0);
      const more = ['cc00cc00-0000-4000-8000-000000000004', 'dd00dd00-0000-4000-8000-000000000005', 'ee00ee00-0000-4000-8000-000000000006'];
      await store.syncNodes(
        [
          ...ids.map((id, i) => nodeRecord(id, { name: `n${i}`, owner: 'owners' })),
          nodeRecord(more[0]!, { name: null, owner: 'owners' }),
          nodeRecord(more[1]!, { name: 'Ωmega "x"', owner: 'owners' }),
          nodeRecord(more[2]!, { name: 'N1', owner: 'owners' }),
        ],
        at(1),
      );
      const leased = await store.leasing.createLease(
        {
          name: 'odd',
          project_id: odd.id,
          created_by: null,
          start: at(HOUR),
          end: at(2 * HOUR + 123),
          request: { nodes: [more[1]!] },
          allocations: [{ node_id: more[1]!, group_index: 0 }],
          cleaning_gap_ms: 0,
          max_nodes: null,
        },
        [],
        T0,
      );
      const other = await lease('nightly', 1, ids[2]!);
      const now = at(HOUR + 1);
      const listed = (await store.listNodes({}, { kind: 'all' }, { limit: 10 })).items.map((n) => n.id);
      const versions = (await store.listNodeVersions({}, { kind: 'all' }, { limit: 10 })).items;
      const leases = new Map((await store.leasesInForce(versions.map((v) => v.id), now)).map((a) => [a.node_id, a]));
      expect(versions.map((v) => v.id)).toEqual(listed);
      expect(listed[0]).toBe(more[0]);
      const byId = new Map(versions.map((v) => [v.id, v]));
      expect(leases.get(more[1]!)).toMatchObject({ lease: { lease_id: leased.id, project_id: odd.id }, lessee_name: 'lab "β" \\ ü' });
      expect(leases.get(more[1]!)!.lease!.end.getTime()).toBe(at(2 * HOUR + 123).getTime());
      expect(leases.get(ids[2]!)!.lease?.lease_id).toBe(other.id);
      expect([...leases.values()].filter((v) => v.lease !== null).length).toBe(2);
      // Page by page (markers) and filtered by ids, the same nodes in the same order.
      const paged: string[] = [];
      let marker: string | undefined;
      do {
        const page = await store.listNodeVersions({}, { kind: 'all' }, { limit: 2, marker });
        paged.push(...page.items.map((v) => v.id));
        marker = page.nextMarker ?? undefined;
      } while (marker);
      expect(paged).toEqual(listed);
      const some = (await store.listNodeVersions({ ids: [more[2]!, ids[0]!, 'nope'] }, { kind: 'all' }, { limit: 10 })).items;
      expect(some.map((v) => v.id)).toEqual(listed.filter((id) => id === more[2] || id === ids[0]));
      expect(some.map((v) => v.version)).toEqual(some.map((v) => byId.get(v.id)!.version));
      expect((await store.listNodeVersions({ ids: [] }, { kind: 'all' }, { limit: 10 })).items).toEqual([]);
      // A project created under a node's raw owner resolves it otherwise: the version changes without a write of its own.
      await store.syncNodes([nodeRecord(ids[0]!, { name: 'n0', owner: 'later' })], at(2));
      const before = (await store.listNodeVersions({ ids: [ids[0]!] }, { kind: 'all' }, { limit: 10 })).items[0]!.version;
      await store.createProject({ name: 'later' }, at(3));
      const after = (await store.listNodeVersions({ ids: [ids[0]!] }, { kind: 'all' }, { limit: 10 })).items[0]!.version;
      expect(after).not.toBe(before);
      expect((await store.nodeViewsByIds([ids[0]!]))[0]).toMatchObject({ version: after, node: { owner_project: { name: 'later' } } });
    });

    it('lists leases by exact name (several may share one) and by id prefix', async () => {
      const store = await fresh();
      const { astro, ids, lease } = await setup(store);
      const a = await lease('nightly', 1, ids[0]!);
      const b = await lease('nightly', 3, ids[0]!);
      const c = await lease('one-off', 1, ids[1]!);
      const byName = await store.leasing.listLeases({ name: 'nightly' }, { limit: 10 });
      expect(byName.items.map((l) => l.id).sort()).toEqual([a.id, b.id].sort());
      expect((await store.leasing.listLeases({ name: 'night' }, { limit: 10 })).items).toEqual([]);
      const byPrefix = await store.leasing.listLeases({ id_prefix: c.id.slice(0, 8).toUpperCase(), project_id: astro.id }, { limit: 10 });
      expect(byPrefix.items.map((l) => l.id)).toEqual([c.id]);
      expect((await store.leasing.listLeases({ id_prefix: unusedFirstDigit([a.id, b.id, c.id]) }, { limit: 10 })).items).toEqual([]);
    });

    it('lists offers, projects, users and tokens by id prefix, and users by exact name', async () => {
      const store = await fresh();
      const { owners, astro, ids } = await setup(store);
      const offer = await store.leasing.createOffer(
        { node_id: ids[0]!, project_id: owners.id, start: T0, end: null, max_lease_ms: null, min_lease_ms: null, allowed_projects: null, created_by: null },
        [],
        T0,
      );
      const offers = await store.leasing.listOffers({ id_prefix: offer.id.slice(0, 8), now: T0 }, { limit: 10 });
      expect(offers.items.map((o) => o.id)).toEqual([offer.id]);
      expect((await store.leasing.listOffers({ id_prefix: unusedFirstDigit([offer.id]), now: T0 }, { limit: 10 })).items).toEqual([]);

      const projects = await store.listProjects({ id_prefix: astro.id.slice(0, 8) }, { limit: 10 });
      expect(projects.items.map((p) => p.id)).toEqual([astro.id]);
      // With the caller's allow-list, a prefix of a project it may not see finds nothing.
      const narrowed = await store.listProjects({ ids: [owners.id], id_prefix: astro.id.slice(0, 8) }, { limit: 10 });
      expect(narrowed.items.map((p) => p.id)).not.toContain(astro.id);

      const ada = await store.createUser({ name: 'ada', project_id: astro.id, role: 'member' }, T0);
      const bob = await store.createUser({ name: 'bob', project_id: astro.id, role: 'member' }, T0);
      expect((await store.listUsers({ name: 'ada' }, { limit: 10 })).items.map((u) => u.id)).toEqual([ada.id]);
      expect((await store.listUsers({ name: 'ad' }, { limit: 10 })).items).toEqual([]);
      expect((await store.listUsers({ id_prefix: bob.id.slice(0, 8) }, { limit: 10 })).items.map((u) => u.id)).toEqual([bob.id]);

      const token = await store.createToken({ user_id: ada.id, token_hash: 'h1', prefix: 'lh_abc', description: '' }, T0);
      expect((await store.listTokens({ id_prefix: token.id.slice(0, 8) }, { limit: 10 })).items.map((t) => t.id)).toEqual([token.id]);
      expect((await store.listTokens({ id_prefix: unusedFirstDigit([token.id]) }, { limit: 10 })).items).toEqual([]);
    });
  });
}
