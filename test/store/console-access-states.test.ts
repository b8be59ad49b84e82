import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { TEST_DATABASE_URL, testDatabases } from '../support/postgres.js';
import { HOUR, T0, at, nodeRecord, type OpenFreshStore, useFreshStores } from './contract/fixtures.js';

const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

/**
 * ConsoleStore.accessStates: what the console proxy re-checks all its open connections with, in one query
 * (issue 11, defect 6). Run on PGlite always and on PostgreSQL when LEASEHOLD_TEST_DATABASE_URL is set.
 */
function accessStatesContract(engine: string, open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  async function world(store: Store) {
    const owners = await store.createProject({ name: 'physics-lab' }, T0);
    const bio = await store.createProject({ name: 'bio-lab' }, T0);
    const ada = await store.createUser({ name: 'ada', project_id: bio.id, role: 'member' }, T0);
    const olga = await store.createUser({ name: 'olga', project_id: owners.id, role: 'manager' }, T0);
    await store.syncNodes([nodeRecord('n1', { owner: 'physics-lab' }), nodeRecord('n2', { owner: owners.id }), nodeRecord('n3')], T0);
    const token = (node: string, user: string, hash: string) =>
      store.consoles.create({ node_id: node, user_id: user, token_hash: hash, expires_at: at(HOUR) }, [], T0);
    const lease = (project: string, node: string, startH: number, endH: number) =>
      store.leasing.createLease(
        {
          name: `l-${node}-${startH}`,
          project_id: project,
          created_by: null,
          start: at(startH * HOUR),
          end: at(endH * HOUR),
          request: { nodes: [node] },
          allocations: [{ node_id: node, group_index: 0 }],
          cleaning_gap_ms: 0,
          max_nodes: null,
        },
        [],
        T0,
      );
    return { owners, bio, ada, olga, token, lease };
  }

  describe(`console access states (${engine})`, () => {
    it('answers for every token at once: its user now, the node owner resolved, the lease granting access now', async () => {
      const store = await fresh();
      const { owners, bio, ada, olga, token, lease } = await world(store);
      const t1 = await token('n1', ada.id, 'h1');
      const t2 = await token('n2', olga.id, 'h2');
      const t3 = await token('n3', ada.id, 'h3');
      const l = await lease(bio.id, 'n1', 0, 2);
      const now = at(HOUR);
      const states = await store.consoles.accessStates([t1.id, t2.id, t3.id, UNKNOWN_UUID, 'not-a-uuid'], now);
      expect([...states.keys()].sort()).toEqual([t1.id, t2.id, t3.id].sort());
      expect(states.get(t1.id)).toEqual({
        grant: await store.consoles.grant(t1.id),
        node: { owner_project_id: owners.id },
        lease: { lease_id: l.id, project_id: bio.id, end: at(2 * HOUR) },
      });
      expect(states.get(t2.id)).toMatchObject({ node: { owner_project_id: owners.id }, lease: null });
      expect(states.get(t2.id)?.grant.principal).toMatchObject({ userName: 'olga', role: 'manager', projectId: owners.id });
      expect(states.get(t3.id)).toMatchObject({ node: { owner_project_id: null }, lease: null });
      // The same lease currentLeases gives, before, at and after its window.
      for (const instant of [at(-1), at(HOUR), at(2 * HOUR), at(3 * HOUR)]) {
        const current = (await store.leasing.currentLeases(['n1'], instant)).get('n1') ?? null;
        expect((await store.consoles.accessStates([t1.id], instant)).get(t1.id)?.lease).toEqual(current);
      }
    });

    it('shows a revoked token as revoked, and a removed node as gone', async () => {
      const store = await fresh();
      const { bio, ada, token, lease } = await world(store);
      const t1 = await token('n1', ada.id, 'h1');
      const t2 = await token('n2', ada.id, 'h2');
      await lease(bio.id, 'n1', 0, 2);
      await store.consoles.revoke(t1.id, [], at(1));
      await store.syncNodes([nodeRecord('n1', { owner: 'physics-lab' }), nodeRecord('n3')], at(2)); // n2 is gone
      const states = await store.consoles.accessStates([t1.id, t2.id], at(HOUR));
      expect(states.get(t1.id)?.grant.token.revoked_at).toEqual(at(1));
      expect(states.get(t1.id)?.lease).not.toBeNull();
      expect(states.get(t2.id)?.node).toBeNull();
      expect(await store.consoles.accessStates([], at(HOUR))).toEqual(new Map());
    });
  });
}

accessStatesContract('PGlite', () => openStore({ dataDir: 'memory://' }));

if (TEST_DATABASE_URL) {
  const databases = testDatabases(TEST_DATABASE_URL, 'leasehold_console');
  afterAll(() => databases.dropAll());
  accessStatesContract('PostgreSQL', async () => openStore({ databaseUrl: (await databases.create()).url, dataDir: 'unused' }));
}
