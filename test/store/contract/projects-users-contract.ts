import { describe, expect, it } from 'vitest';
import { AlreadyExistsError, ConflictError, InvalidRequestError, NotFoundError } from '../../../src/domain/errors.js';
import { allPages, at, HOUR, nodeRecord, T0, type OpenFreshStore, useFreshStores } from './fixtures.js';

const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

export function projectsContract(open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  describe('projects', () => {
    it('creates a project with an empty description and quota, and finds it by id and by name', async () => {
      const store = await fresh();
      const created = await store.createProject({ name: 'physics-lab' }, T0);
      expect(created).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'physics-lab',
        description: '',
        quota: {},
        notice_offsets_ms: null,
        created_at: T0,
        updated_at: T0,
      });
      expect(created.created_at).toBeInstanceOf(Date);
      expect(await store.findProject(created.id)).toEqual(created);
      expect(await store.findProject('physics-lab')).toEqual(created);
    });

    it('keeps the description and quota it was given', async () => {
      const store = await fresh();
      const quota = { max_nodes: 4, max_lease_duration_ms: 5 * 86_400_000 };
      const created = await store.createProject({ name: 'bio', description: 'Biology', quota }, T0);
      expect(created).toMatchObject({ description: 'Biology', quota });
      expect((await store.findProject('bio'))?.quota).toEqual(quota);
    });

    it('answers null for a project that does not exist, by id, by name or by a malformed id', async () => {
      const store = await fresh();
      expect(await store.findProject(UNKNOWN_UUID)).toBeNull();
      expect(await store.findProject('nobody')).toBeNull();
      expect(await store.findProject("'; drop table projects; --")).toBeNull();
    });

    it('a taken project name is refused with AlreadyExistsError naming the name', async () => {
      const store = await fresh();
      await store.createProject({ name: 'physics-lab' }, T0);
      const attempt = store.createProject({ name: 'physics-lab' }, T0);
      await expect(attempt).rejects.toBeInstanceOf(AlreadyExistsError);
      await expect(attempt).rejects.toThrow('project name "physics-lab" is already taken');
    });

    it('a project named like another project id does not shadow that project', async () => {
      const store = await fresh();
      const real = await store.createProject({ name: 'real' }, T0);
      const impostor = await store.createProject({ name: real.id }, T0);
      expect((await store.findProject(real.id))?.id).toBe(real.id);
      expect(impostor.name).toBe(real.id);
    });

    it('updates name, description and quota and stamps updated_at, keeping created_at', async () => {
      const store = await fresh();
      const created = await store.createProject({ name: 'old', description: 'd' }, T0);
      const renamed = await store.updateProject(created.id, { name: 'new' }, at(1000));
      expect(renamed).toEqual({ ...created, name: 'new', updated_at: at(1000) });
      const requoted = await store.updateProject(created.id, { quota: { max_nodes: 2 }, description: 'e' }, at(2000));
      expect(requoted).toEqual({ ...renamed, quota: { max_nodes: 2 }, description: 'e', updated_at: at(2000) });
      expect(await store.findProject('old')).toBeNull();
      expect(await store.findProject('new')).toEqual(requoted);
    });

    it('updating a project that does not exist is NotFoundError', async () => {
      const store = await fresh();
      await expect(store.updateProject(UNKNOWN_UUID, { name: 'x' }, T0)).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.updateProject('not-a-uuid', { name: 'x' }, T0)).rejects.toBeInstanceOf(NotFoundError);
    });

    it('renaming a project to a taken name is AlreadyExistsError and changes nothing', async () => {
      const store = await fresh();
      await store.createProject({ name: 'a' }, T0);
      const b = await store.createProject({ name: 'b' }, T0);
      await expect(store.updateProject(b.id, { name: 'a' }, at(1))).rejects.toThrow(AlreadyExistsError);
      expect(await store.findProject(b.id)).toEqual(b);
    });

    it('lists projects by name across pages, with no next marker on the last page', async () => {
      const store = await fresh();
      for (const name of ['p-05', 'p-01', 'p-04', 'p-02', 'p-03']) await store.createProject({ name }, T0);
      const pages = await allPages((marker) => store.listProjects({}, { limit: 2, marker }));
      expect(pages.map((page) => page.map((p) => p.name))).toEqual([['p-01', 'p-02'], ['p-03', 'p-04'], ['p-05']]);
      const exact = await store.listProjects({}, { limit: 5 });
      expect(exact.items).toHaveLength(5);
      expect(exact.nextMarker).toBeNull();
    });

    it('an ids filter lists only those projects; an empty one lists none', async () => {
      const store = await fresh();
      const a = await store.createProject({ name: 'a' }, T0);
      await store.createProject({ name: 'b' }, T0);
      const c = await store.createProject({ name: 'c' }, T0);
      const listed = await store.listProjects({ ids: [c.id, a.id, 'not-a-uuid'] }, { limit: 10 });
      expect(listed.items.map((p) => p.name)).toEqual(['a', 'c']);
      expect((await store.listProjects({ ids: [] }, { limit: 10 })).items).toEqual([]);
    });

    it('refuses a limit outside 1..1000 and a marker that names no listed item', async () => {
      const store = await fresh();
      const a = await store.createProject({ name: 'a' }, T0);
      const b = await store.createProject({ name: 'b' }, T0);
      for (const limit of [0, 1001, 1.5]) {
        await expect(store.listProjects({}, { limit })).rejects.toBeInstanceOf(InvalidRequestError);
      }
      expect((await store.listProjects({}, { limit: 1000 })).items).toHaveLength(2);
      await expect(store.listProjects({}, { limit: 10, marker: UNKNOWN_UUID })).rejects.toBeInstanceOf(InvalidRequestError);
      await expect(store.listProjects({}, { limit: 10, marker: 'junk' })).rejects.toBeInstanceOf(InvalidRequestError);
      // A project outside the caller's allow-list cannot serve as a marker either.
      await expect(store.listProjects({ ids: [a.id] }, { limit: 10, marker: b.id })).rejects.toBeInstanceOf(
        InvalidRequestError,
      );
    });
  });

  describe('deleting', () => {
    it('deletes a project nothing refers to; deleting it again is NotFoundError', async () => {
      const store = await fresh();
      const project = await store.createProject({ name: 'empty' }, T0);
      await store.deleteProject(project.id);
      expect(await store.findProject(project.id)).toBeNull();
      await expect(store.deleteProject(project.id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.deleteProject('empty')).rejects.toBeInstanceOf(NotFoundError);
    });

    it('refuses to delete a project with users, leases, offers or live nodes, counting each in the details', async () => {
      const store = await fresh();
      const owner = await store.createProject({ name: 'owners' }, T0);
      const lessee = await store.createProject({ name: 'lessees' }, T0);
      await store.createUser({ name: 'ada', project_id: owner.id, role: 'member' }, T0);
      // Ironic names the owner by name for one node and by id for the other.
      await store.syncNodes([nodeRecord('n1', { owner: 'owners' }), nodeRecord('n2', { owner: owner.id })], T0);
      await store.leasing.createOffer(
        { node_id: 'n1', project_id: owner.id, start: T0, end: null, max_lease_ms: null, min_lease_ms: null, allowed_projects: null, created_by: null },
        [],
        T0,
      );
      await store.leasing.createLease(
        {
          name: 'l',
          project_id: lessee.id,
          created_by: null,
          start: at(HOUR),
          end: at(2 * HOUR),
          request: { nodes: ['n1'] },
          allocations: [{ node_id: 'n1', group_index: 0 }],
          cleaning_gap_ms: 0,
          max_nodes: null,
        },
        [],
        T0,
      );
      const refused = store.deleteProject(owner.id);
      await expect(refused).rejects.toBeInstanceOf(ConflictError);
      await expect(refused).rejects.toMatchObject({ details: { users: 1, leases: 0, offers: 1, nodes: 2 } });
      await expect(store.deleteProject(lessee.id)).rejects.toMatchObject({ details: { users: 0, leases: 1, offers: 0, nodes: 0 } });
      expect(await store.findProject(owner.id)).not.toBeNull();
      // Removed nodes no longer count.
      const ghost = await store.createProject({ name: 'ghost' }, T0);
      await store.syncNodes([nodeRecord('n1', { owner: 'owners' }), nodeRecord('n2', { owner: owner.id }), nodeRecord('n3', { owner: 'ghost' })], T0);
      await store.syncNodes([nodeRecord('n1', { owner: 'owners' }), nodeRecord('n2', { owner: owner.id })], at(1));
      await store.deleteProject(ghost.id);
    });

    it('deletes a user with its tokens; what it created stays, and deleting it again is NotFoundError', async () => {
      const store = await fresh();
      const project = await store.createProject({ name: 'p' }, T0);
      const user = await store.createUser({ name: 'ada', project_id: project.id, role: 'member' }, T0);
      const token = await store.createToken({ user_id: user.id, token_hash: 'h-ada', prefix: 'lh_ada' }, T0);
      await store.syncNodes([nodeRecord('n1', { owner: 'p' })], T0);
      const offer = await store.leasing.createOffer(
        { node_id: 'n1', project_id: project.id, start: T0, end: null, max_lease_ms: null, min_lease_ms: null, allowed_projects: null, created_by: user.id },
        [],
        T0,
      );
      await store.deleteUser(user.id);
      expect(await store.getUser(user.id)).toBeNull();
      expect(await store.getToken(token.id)).toBeNull();
      expect(await store.authenticate('h-ada', T0)).toBeNull();
      expect(await store.leasing.getOffer(offer.id)).toMatchObject({ id: offer.id, created_by: null });
      await expect(store.deleteUser(user.id)).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.deleteUser('ada')).rejects.toBeInstanceOf(NotFoundError);
    });
  });

  describe('users', () => {
    it('creates a user in a project and reads it back', async () => {
      const store = await fresh();
      const project = await store.createProject({ name: 'physics-lab' }, T0);
      const user = await store.createUser({ name: 'ada', project_id: project.id, role: 'member' }, at(5));
      expect(user).toEqual({ id: expect.any(String), name: 'ada', project_id: project.id, role: 'member', created_at: at(5) });
      expect(await store.getUser(user.id)).toEqual(user);
    });

    it('an operator (admin) may belong to no project', async () => {
      const store = await fresh();
      const admin = await store.createUser({ name: 'root', project_id: null, role: 'admin' }, T0);
      expect(admin).toMatchObject({ project_id: null, role: 'admin' });
    });

    it('a reader, member or manager without a project is refused', async () => {
      const store = await fresh();
      await expect(store.createUser({ name: 'lost', project_id: null, role: 'reader' }, T0)).rejects.toBeInstanceOf(
        InvalidRequestError,
      );
    });

    it('an unknown project on createUser is NotFoundError naming the project', async () => {
      const store = await fresh();
      const attempt = store.createUser({ name: 'ada', project_id: UNKNOWN_UUID, role: 'member' }, T0);
      await expect(attempt).rejects.toBeInstanceOf(NotFoundError);
      await expect(attempt).rejects.toMatchObject({ details: { resource: 'project', id: UNKNOWN_UUID } });
      await expect(store.createUser({ name: 'ada', project_id: 'nope', role: 'member' }, T0)).rejects.toBeInstanceOf(
        NotFoundError,
      );
    });

    it('a taken user name is AlreadyExistsError naming the name', async () => {
      const store = await fresh();
      const project = await store.createProject({ name: 'p' }, T0);
      await store.createUser({ name: 'ada', project_id: project.id, role: 'member' }, T0);
      const attempt = store.createUser({ name: 'ada', project_id: null, role: 'admin' }, T0);
      await expect(attempt).rejects.toBeInstanceOf(AlreadyExistsError);
      await expect(attempt).rejects.toThrow('user name "ada" is already taken');
    });

    it('getUser answers null for an unknown or malformed id', async () => {
      const store = await fresh();
      expect(await store.getUser(UNKNOWN_UUID)).toBeNull();
      expect(await store.getUser('ada')).toBeNull();
    });

    it("lists users by name across pages, and a project's users only when filtered", async () => {
      const store = await fresh();
      const p = await store.createProject({ name: 'p' }, T0);
      const q = await store.createProject({ name: 'q' }, T0);
      for (const name of ['u-3', 'u-1', 'u-4', 'u-2']) await store.createUser({ name, project_id: p.id, role: 'reader' }, T0);
      await store.createUser({ name: 'u-0', project_id: q.id, role: 'manager' }, T0);
      const pages = await allPages((marker) => store.listUsers({ project_id: p.id }, { limit: 3, marker }));
      expect(pages.map((page) => page.map((u) => u.name))).toEqual([['u-1', 'u-2', 'u-3'], ['u-4']]);
      const everyone = await store.listUsers({}, { limit: 10 });
      expect(everyone.items.map((u) => u.name)).toEqual(['u-0', 'u-1', 'u-2', 'u-3', 'u-4']);
      expect((await store.listUsers({ project_id: 'nope' }, { limit: 10 })).items).toEqual([]);
    });
  });
}
