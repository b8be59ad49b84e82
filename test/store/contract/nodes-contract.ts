import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../../src/domain/errors.js';
import type { NodeVisibility } from '../../../src/store/store.js';
import { allPages, at, T0, nodeRecord, type OpenFreshStore, useFreshStores } from './fixtures.js';

const ALL: NodeVisibility = { kind: 'all' };

export function nodesContract(open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  describe('inventory sync', () => {
    it('stores every field of a node record and reads it back unchanged', async () => {
      const store = await fresh();
      const record = nodeRecord('n1', {
        owner: 'nobody-yet',
        lessee: 'someone',
        properties: { memory_mb: 1024, nested: { list: [1, 'two', null], flag: true } },
        traits: ['B', 'A'],
        facts: { memory: 1_073_741_824, cpu_arch: 'aarch64', gpu: true },
        target_provision_state: 'active',
        maintenance: true,
        maintenance_reason: 'fan',
        last_error: 'boom',
        console_enabled: true,
        extra: { k: 'v' },
      });
      await store.syncNodes([record], at(7));
      const node = await store.getNode('n1', ALL);
      expect(node).toEqual({ ...record, synced_at: at(7), owner_project: null, quarantined_at: null, quarantine_reason: null });
      expect(node?.driver_updated_at).toBeInstanceOf(Date);
      expect(node?.synced_at).toBeInstanceOf(Date);
    });

    it('finds a node by its name as well as by its id, the id winning a clash', async () => {
      const store = await fresh();
      await store.syncNodes([nodeRecord('n1'), nodeRecord('n2', { name: 'n3' }), nodeRecord('n3', { name: 'other' })], T0);
      expect((await store.getNode('node-n1', ALL))?.id).toBe('n1');
      expect((await store.getNode('n3', ALL))?.id).toBe('n3');
      expect((await store.getNode('other', ALL))?.id).toBe('n3');
      expect(await store.getNode('node-nobody', ALL)).toBeNull();
    });

    it('counts added, updated, unchanged and removed nodes', async () => {
      const store = await fresh();
      const first = await store.syncNodes([nodeRecord('a'), nodeRecord('b'), nodeRecord('c')], T0);
      expect(first).toEqual({ added: 3, updated: 0, unchanged: 0, removed: 0 });
      // Same content with object keys in another order is still unchanged (jsonb does not keep key order).
      const reordered = nodeRecord('a', { properties: Object.fromEntries(Object.entries(nodeRecord('a').properties).reverse()) });
      const second = await store.syncNodes(
        [reordered, nodeRecord('b', { power_state: 'power on' }), nodeRecord('d')],
        at(1000),
      );
      expect(second).toEqual({ added: 1, updated: 1, unchanged: 1, removed: 1 });
      expect(await store.getNode('c', ALL)).toBeNull();
      expect((await store.getNode('b', ALL))?.power_state).toBe('power on');
      // An unchanged node was still seen by this sync.
      expect((await store.getNode('a', ALL))?.synced_at).toEqual(at(1000));
      expect(await store.syncNodes([reordered, nodeRecord('b', { power_state: 'power on' }), nodeRecord('d')], at(2000))).toEqual({
        added: 0,
        updated: 0,
        unchanged: 3,
        removed: 0,
      });
    });

    it('notices a change in any single field', async () => {
      const store = await fresh();
      const base = nodeRecord('n');
      await store.syncNodes([base], T0);
      const changes = [
        { name: 'renamed' },
        { owner: 'x' },
        { traits: ['CUSTOM_NVME', 'CUSTOM_GPU'] },
        { facts: { ...base.facts, cpus: 64 } },
        { maintenance: true },
        { driver_updated_at: null },
        { extra: {} },
      ];
      for (const [i, change] of changes.entries()) {
        const result = await store.syncNodes([nodeRecord('n', change)], at(i + 1));
        expect(result.updated, JSON.stringify(change)).toBe(1);
        await store.syncNodes([base], at(i + 1));
      }
    });

    it('an empty inventory removes every node', async () => {
      const store = await fresh();
      await store.syncNodes([nodeRecord('a'), nodeRecord('b')], T0);
      expect(await store.syncNodes([], at(1))).toEqual({ added: 0, updated: 0, unchanged: 0, removed: 2 });
      expect((await store.listNodes({}, ALL, { limit: 10 })).items).toEqual([]);
    });

    it('removed nodes are hidden and come back, counted as added, when the driver lists them again', async () => {
      const store = await fresh();
      await store.syncNodes([nodeRecord('a'), nodeRecord('b')], T0);
      await store.syncNodes([nodeRecord('a')], at(1));
      expect(await store.getNode('b', ALL)).toBeNull();
      expect((await store.listNodes({}, ALL, { limit: 10 })).items.map((n) => n.id)).toEqual(['a']);
      expect(await store.syncNodes([nodeRecord('a'), nodeRecord('b')], at(2))).toEqual({
        added: 1,
        updated: 0,
        unchanged: 1,
        removed: 0,
      });
      expect((await store.getNode('b', ALL))?.synced_at).toEqual(at(2));
    });

    it('handles an inventory larger than one statement can carry', async () => {
      const store = await fresh();
      const many = Array.from({ length: 1203 }, (_, i) => nodeRecord(`n${String(i).padStart(4, '0')}`));
      expect(await store.syncNodes(many, T0)).toMatchObject({ added: 1203 });
      expect(await store.syncNodes(many.slice(3), at(1))).toEqual({ added: 0, updated: 0, unchanged: 1200, removed: 3 });
    });

    it('a sync that fails part-way changes nothing', async () => {
      const store = await fresh();
      await store.syncNodes([nodeRecord('a')], T0);
      const broken = nodeRecord('c', { provision_state: null as unknown as string });
      await expect(store.syncNodes([nodeRecord('b'), broken], at(1))).rejects.toBeInstanceOf(InvalidRequestError);
      expect((await store.listNodes({}, ALL, { limit: 10 })).items.map((n) => n.id)).toEqual(['a']);
      expect(await store.syncNodes([nodeRecord('a')], at(2))).toEqual({ added: 0, updated: 0, unchanged: 1, removed: 0 });
    });

    it('upsertNode inserts, updates, and brings back a removed node', async () => {
      const store = await fresh();
      const inserted = await store.upsertNode(nodeRecord('a'), T0);
      expect(inserted).toEqual({ ...nodeRecord('a'), synced_at: T0 });
      const updated = await store.upsertNode(nodeRecord('a', { provision_state: 'cleaning' }), at(1));
      expect(updated).toMatchObject({ provision_state: 'cleaning', synced_at: at(1) });
      await store.syncNodes([], at(2));
      expect(await store.getNode('a', ALL)).toBeNull();
      await store.upsertNode(nodeRecord('a'), at(3));
      expect((await store.getNode('a', ALL))?.provision_state).toBe('available');
    });
  });

  describe('node owners and visibility', () => {
    it("resolves a node's owner to a project by id and by name, including a project created after the sync", async () => {
      const store = await fresh();
      const physics = await store.createProject({ name: 'physics-lab' }, T0);
      await store.syncNodes(
        [
          nodeRecord('by-id', { owner: physics.id }),
          nodeRecord('by-name', { owner: 'physics-lab' }),
          nodeRecord('late', { owner: 'late-lab' }),
          nodeRecord('none', { owner: null }),
        ],
        T0,
      );
      const owner = { id: physics.id, name: 'physics-lab' };
      expect((await store.getNode('by-id', ALL))?.owner_project).toEqual(owner);
      expect((await store.getNode('by-name', ALL))?.owner_project).toEqual(owner);
      expect((await store.getNode('late', ALL))?.owner_project).toBeNull();
      expect((await store.getNode('none', ALL))?.owner_project).toBeNull();

      const late = await store.createProject({ name: 'late-lab' }, at(1));
      expect((await store.getNode('late', ALL))?.owner_project).toEqual({ id: late.id, name: 'late-lab' });
      const listed = await store.listNodes({}, ALL, { limit: 10 });
      expect(Object.fromEntries(listed.items.map((n) => [n.id, n.owner_project?.name ?? null]))).toEqual({
        'by-id': 'physics-lab',
        'by-name': 'physics-lab',
        late: 'late-lab',
        none: null,
      });
    });

    it("a project sees only the nodes whose owner is its id or its name", async () => {
      const store = await fresh();
      const physics = await store.createProject({ name: 'physics-lab' }, T0);
      const bio = await store.createProject({ name: 'bio-lab' }, T0);
      await store.syncNodes(
        [
          nodeRecord('p1', { owner: physics.id }),
          nodeRecord('p2', { owner: 'physics-lab' }),
          nodeRecord('b1', { owner: 'bio-lab' }),
          nodeRecord('x1', { owner: null }),
        ],
        T0,
      );
      const asPhysics: NodeVisibility = { kind: 'project', projectId: physics.id, projectName: physics.name };
      const asBio: NodeVisibility = { kind: 'project', projectId: bio.id, projectName: bio.name };
      expect((await store.listNodes({}, asPhysics, { limit: 10 })).items.map((n) => n.id).sort()).toEqual(['p1', 'p2']);
      expect((await store.listNodes({}, asBio, { limit: 10 })).items.map((n) => n.id)).toEqual(['b1']);
      expect(await store.getNode('p1', asPhysics)).not.toBeNull();
      expect(await store.getNode('p1', asBio)).toBeNull();
      expect(await store.getNode('x1', asBio)).toBeNull();
      expect((await store.listNodes({}, ALL, { limit: 10 })).items).toHaveLength(4);
    });

    it("a project named like another project's id does not see that project's nodes", async () => {
      const store = await fresh();
      const real = await store.createProject({ name: 'real' }, T0);
      const impostor = await store.createProject({ name: real.id }, T0);
      await store.syncNodes([nodeRecord('n', { owner: real.id })], T0);
      const asImpostor: NodeVisibility = { kind: 'project', projectId: impostor.id, projectName: impostor.name };
      expect(await store.getNode('n', asImpostor)).toBeNull();
      expect((await store.getNode('n', ALL))?.owner_project).toEqual({ id: real.id, name: 'real' });
    });

    it('filters nodes by owner (id or name), resource class, states and maintenance', async () => {
      const store = await fresh();
      const physics = await store.createProject({ name: 'physics-lab' }, T0);
      await store.syncNodes(
        [
          nodeRecord('a', { owner: physics.id, resource_class: 'gpu', power_state: 'power on' }),
          nodeRecord('b', { owner: 'physics-lab', resource_class: 'storage', provision_state: 'active' }),
          nodeRecord('c', { owner: 'ghost-lab', maintenance: true }),
          nodeRecord('d', { owner: null, resource_class: 'gpu' }),
        ],
        T0,
      );
      const ids = async (filter: Parameters<typeof store.listNodes>[0]) =>
        (await store.listNodes(filter, ALL, { limit: 10 })).items.map((n) => n.id).sort();
      expect(await ids({ owner: physics.id })).toEqual(['a', 'b']);
      expect(await ids({ owner: 'physics-lab' })).toEqual(['a', 'b']);
      expect(await ids({ owner: 'ghost-lab' })).toEqual(['c']); // raw owner, no such project
      expect(await ids({ resource_class: 'gpu' })).toEqual(['a', 'd']);
      expect(await ids({ provision_state: 'active' })).toEqual(['b']);
      expect(await ids({ power_state: 'power on' })).toEqual(['a']);
      expect(await ids({ maintenance: true })).toEqual(['c']);
      expect(await ids({ maintenance: false, resource_class: 'gpu', owner: 'physics-lab' })).toEqual(['a']);
    });
  });

  describe('node listing', () => {
    it('lists nodes by name then id across pages, unnamed nodes first', async () => {
      const store = await fresh();
      await store.syncNodes(
        [
          nodeRecord('z9', { name: 'node-02' }),
          nodeRecord('a1', { name: 'node-03' }),
          nodeRecord('m5', { name: null }),
          nodeRecord('b2', { name: 'node-01' }),
          nodeRecord('a0', { name: null }),
          nodeRecord('c3', { name: 'node-03' }),
        ],
        T0,
      );
      const pages = await allPages((marker) => store.listNodes({}, ALL, { limit: 4, marker }));
      expect(pages.map((page) => page.map((n) => n.id))).toEqual([['a0', 'm5', 'b2', 'z9'], ['a1', 'c3']]);
      const byTwo = await allPages((marker) => store.listNodes({}, ALL, { limit: 2, marker }));
      expect(byTwo.flat().map((n) => n.id)).toEqual(['a0', 'm5', 'b2', 'z9', 'a1', 'c3']);
      expect(byTwo).toHaveLength(3);
    });

    it('a node the caller cannot see is refused as a marker like an unknown one', async () => {
      const store = await fresh();
      const physics = await store.createProject({ name: 'physics-lab' }, T0);
      await store.syncNodes([nodeRecord('mine', { owner: 'physics-lab' }), nodeRecord('theirs', { owner: 'bio-lab' })], T0);
      const asPhysics: NodeVisibility = { kind: 'project', projectId: physics.id, projectName: physics.name };
      await expect(store.listNodes({}, asPhysics, { limit: 5, marker: 'theirs' })).rejects.toBeInstanceOf(InvalidRequestError);
      await expect(store.listNodes({}, asPhysics, { limit: 5, marker: 'never-was' })).rejects.toBeInstanceOf(
        InvalidRequestError,
      );
      expect((await store.listNodes({}, asPhysics, { limit: 5, marker: 'mine' })).items).toEqual([]);
    });

    it('the next page still follows a marker node that was removed or stopped matching in between', async () => {
      const store = await fresh();
      await store.syncNodes(['n1', 'n2', 'n3', 'n4'].map((id) => nodeRecord(id, { name: id })), T0);
      const first = await store.listNodes({ power_state: 'power off' }, ALL, { limit: 2 });
      expect(first.nextMarker).toBe('n2');
      await store.syncNodes([nodeRecord('n1', { name: 'n1' }), nodeRecord('n3', { name: 'n3' }), nodeRecord('n4', { name: 'n4' })], at(1));
      const second = await store.listNodes({ power_state: 'power off' }, ALL, { limit: 2, marker: first.nextMarker });
      expect(second.items.map((n) => n.id)).toEqual(['n3', 'n4']);
      await store.upsertNode(nodeRecord('n3', { name: 'n3', power_state: 'power on' }), at(2));
      const third = await store.listNodes({ power_state: 'power off' }, ALL, { limit: 2, marker: 'n3' });
      expect(third.items.map((n) => n.id)).toEqual(['n4']);
    });

    it('node versions list the same nodes in the same pages, and a version changes with every write to the node or its owner', async () => {
      const store = await fresh();
      const physics = await store.createProject({ name: 'physics-lab' }, T0);
      await store.syncNodes(['n1', 'n2', 'n3'].map((id) => nodeRecord(id, { name: id, owner: 'physics-lab' })), T0);
      const pages = await allPages((marker) => store.listNodeVersions({}, ALL, { limit: 2, marker }));
      expect(pages.map((page) => page.map((v) => v.id))).toEqual([['n1', 'n2'], ['n3']]);
      const version = async (id: string) => (await store.listNodeVersions({}, ALL, { limit: 10 })).items.find((v) => v.id === id)?.version;
      const before = await version('n2');
      expect(await version('n2')).toBe(before);
      await store.upsertNode(nodeRecord('n2', { name: 'n2', owner: 'physics-lab', power_state: 'power on' }), at(2));
      const powered = await version('n2');
      expect(powered).not.toBe(before);
      await store.updateProject(physics.id, { description: 'only the description' }, at(3));
      expect(await version('n2')).toBe(powered);
      await store.updateProject(physics.id, { name: 'physics' }, at(4));
      expect(await version('n2')).not.toBe(powered);
    });

    it("node facts by id give each node's name and facts as its view has them, removed nodes too, unknown ids left out", async () => {
      const store = await fresh();
      await store.syncNodes([nodeRecord('n1', { name: 'n1' }), nodeRecord('n2', { name: 'n2' })], T0);
      const views = await store.nodeViewsByIds(['n1', 'n2']);
      await store.syncNodes([nodeRecord('n1', { name: 'n1' })], at(1));
      const facts = await store.nodeFacts(['n1', 'n2', 'n2', 'nope']);
      expect([...facts.keys()].sort()).toEqual(['n1', 'n2']);
      for (const { node } of views) expect(facts.get(node.id)).toEqual({ name: node.name, facts: node.facts });
      expect((await store.nodeFacts([])).size).toBe(0);
    });

    it('nodes by id come with the version the listing gives, removed nodes too, unknown ids left out', async () => {
      const store = await fresh();
      await store.syncNodes([nodeRecord('n1', { name: 'n1' }), nodeRecord('n2', { name: 'n2' })], T0);
      const listed = (await store.listNodeVersions({}, ALL, { limit: 10 })).items;
      const read = await store.nodeViewsByIds(['n1', 'n2', 'nope']);
      expect(read.map((r) => [r.node.id, r.version]).sort()).toEqual(listed.map((v) => [v.id, v.version]));
      expect(read.find((r) => r.node.id === 'n1')?.node).toEqual(await store.getNode('n1', ALL));
      await store.syncNodes([nodeRecord('n1', { name: 'n1' })], at(2));
      expect((await store.nodeViewsByIds(['n2'])).map((r) => r.node.id)).toEqual(['n2']);
      expect((await store.listNodeVersions({}, ALL, { limit: 10 })).items.map((v) => v.id)).toEqual(['n1']);
    });
  });
}
