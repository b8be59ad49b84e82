import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjectUser, startTestApp, type TestApp } from '../support/test-app.js';

// What the web UI's owner and admin pages need of the API: an owner's list of the leases on its nodes, and
// deleting projects and users.

let t: TestApp;
let owner: { projectId: string; userId: string; token: string };
let lessee: { projectId: string; userId: string; token: string };
let stranger: { projectId: string; userId: string; token: string };

beforeAll(async () => {
  t = await startTestApp();
  // The test inventory: gpu-01 and gpu-02 are physics-lab's (by name), store-01 is bio-lab's.
  owner = await createProjectUser(t, 'physics-lab', 'member');
  lessee = await createProjectUser(t, 'astro', 'member');
  stranger = await createProjectUser(t, 'bio-lab', 'member');
  for (const node of ['gpu-01', 'gpu-02']) {
    const offer = await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: node } });
    expect(offer.status, JSON.stringify(offer.body)).toBe(201);
  }
  const offer = await t.request('POST', '/v1/offers', { token: stranger.token, body: { node_id: 'store-01' } });
  expect(offer.status, JSON.stringify(offer.body)).toBe(201);
});
afterAll(async () => {
  await t.close();
});

const ids = (res: { body: { leases: { id: string }[] } }) => res.body.leases.map((l) => l.id).sort();

describe('who leases my nodes (GET /v1/leases?owner=)', () => {
  let onMine: string;
  let elsewhere: string;
  let ownOnOthers: string;

  beforeAll(async () => {
    const a = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['gpu-01'], duration: '1d', name: 'on-physics' } });
    const b = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['store-01'], duration: '1d', name: 'on-bio' } });
    // The owner is a lessee too: its own lease of another project's node is not on its nodes.
    const c = await t.request('POST', '/v1/leases', {
      token: owner.token,
      body: { nodes: ['store-01'], start: '2030-01-03T00:00:00Z', duration: '1d', name: 'owner-leases-bio' },
    });
    for (const res of [a, b, c]) expect(res.status, JSON.stringify(res.body)).toBe(201);
    [onMine, elsewhere, ownOnOthers] = [a.body.id, b.body.id, c.body.id];
  });

  it('an owner lists exactly the leases on the nodes its project owns, by id or by name', async () => {
    const all = await t.request('GET', '/v1/leases', { token: owner.token });
    expect(ids(all)).toEqual([onMine, ownOnOthers].sort());
    for (const key of [owner.projectId, 'physics-lab']) {
      const res = await t.request('GET', `/v1/leases?owner=${key}`, { token: owner.token });
      expect(res.status).toBe(200);
      expect(ids(res)).toEqual([onMine]);
      expect(res.body.leases[0]).toMatchObject({ name: 'on-physics', project_id: lessee.projectId, project_name: 'astro' });
    }
  });

  it('the owner filter combines with the state filter', async () => {
    expect(ids(await t.request('GET', '/v1/leases?owner=physics-lab&state=pending', { token: owner.token }))).toEqual([onMine]);
    expect(ids(await t.request('GET', '/v1/leases?owner=physics-lab&state=ended', { token: owner.token }))).toEqual([]);
  });

  it("another project's nodes give a project an empty list, the same as an unknown project", async () => {
    for (const key of ['bio-lab', stranger.projectId, 'no-such-project']) {
      const res = await t.request('GET', `/v1/leases?owner=${key}`, { token: lessee.token });
      expect(res.status).toBe(200);
      expect(res.body.leases).toEqual([]);
    }
  });

  it('the operator asks about any owner', async () => {
    expect(ids(await t.request('GET', '/v1/leases?owner=bio-lab'))).toEqual([elsewhere, ownOnOthers].sort());
    expect(ids(await t.request('GET', '/v1/leases?owner=physics-lab'))).toEqual([onMine]);
  });
});

describe('deleting projects (DELETE /v1/projects/{id})', () => {
  it('the operator deletes an empty project; it is gone by id and by name', async () => {
    const created = await t.request('POST', '/v1/projects', { body: { name: 'short-lived' } });
    expect((await t.request('DELETE', '/v1/projects/short-lived')).status).toBe(204);
    expect((await t.request('GET', `/v1/projects/${created.body.id}`)).status).toBe(404);
    expect((await t.request('GET', '/v1/projects/short-lived')).status).toBe(404);
    expect((await t.request('DELETE', '/v1/projects/short-lived')).status).toBe(404);
  });

  it('a project with users is refused with a message saying what it has and what to do', async () => {
    await createProjectUser(t, 'crowded', 'reader');
    const res = await t.request('DELETE', '/v1/projects/crowded');
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      code: 'conflict',
      message: 'project "crowded" cannot be deleted: it has 1 user; delete its users first',
      details: { users: 1, leases: 0, offers: 0, nodes: 0 },
    });
  });

  it('a project that owns nodes, or has had leases or offers, stays for the audit trail', async () => {
    const owning = await t.request('DELETE', '/v1/projects/physics-lab');
    expect(owning.status).toBe(409);
    expect(owning.body.error.details).toEqual({ project_id: owner.projectId, users: 1, leases: 1, offers: 2, nodes: 2 });
    expect(owning.body.error.message).toBe(
      'project "physics-lab" cannot be deleted: it has 1 user, 1 lease, 2 offers and 2 nodes it owns in Ironic; ' +
        'delete its users first; give those nodes another owner in Ironic; a project that has had leases or offers ' +
        'stays for the audit trail (a quota of max_nodes 0 stops its new leases)',
    );
    expect((await t.request('GET', '/v1/projects/physics-lab')).status).toBe(200);
  });

  it('only the operator deletes projects; a project user is refused, and another project is not found', async () => {
    expect((await t.request('DELETE', '/v1/projects/astro', { token: lessee.token })).status).toBe(403);
    expect((await t.request('DELETE', '/v1/projects/physics-lab', { token: lessee.token })).status).toBe(404);
  });
});

describe('deleting users (DELETE /v1/users/{id})', () => {
  it("the operator deletes a user: its tokens stop working at once, the leases it created stay", async () => {
    const user = await createProjectUser(t, 'astro', 'member', 'leaving');
    const lease = await t.request('POST', '/v1/leases', { token: user.token, body: { nodes: ['gpu-02'], duration: '1h' } });
    expect(lease.status, JSON.stringify(lease.body)).toBe(201);
    expect((await t.request('DELETE', `/v1/users/${user.userId}`)).status).toBe(204);
    expect((await t.request('GET', '/v1/me', { token: user.token })).status).toBe(401);
    expect((await t.request('GET', `/v1/users/${user.userId}`)).status).toBe(404);
    expect((await t.request('GET', `/v1/tokens?user_id=${user.userId}`)).status).toBe(404);
    expect((await t.request('GET', `/v1/leases/${lease.body.id}`)).body).toMatchObject({ project_id: lessee.projectId });
    expect((await t.request('DELETE', `/v1/users/${user.userId}`)).status).toBe(404);
  });

  it("a project manager deletes its own project's users, not other projects' and not itself", async () => {
    const manager = await createProjectUser(t, 'astro', 'manager', 'astro-boss');
    const member = await createProjectUser(t, 'astro', 'reader', 'astro-reader');
    expect((await t.request('DELETE', `/v1/users/${member.userId}`, { token: manager.token })).status).toBe(204);
    expect((await t.request('DELETE', `/v1/users/${owner.userId}`, { token: manager.token })).status).toBe(404);
    const self = await t.request('DELETE', `/v1/users/${manager.userId}`, { token: manager.token });
    expect(self.status).toBe(403);
    expect(self.body.error.message).toMatch(/cannot delete the user you are signed in as/);
  });

  it('a member cannot delete the users of its project', async () => {
    const res = await t.request('DELETE', `/v1/users/${lessee.userId}`, { token: owner.token });
    expect(res.status).toBe(404);
    const colleague = await createProjectUser(t, 'physics-lab', 'reader', 'physics-reader');
    expect((await t.request('DELETE', `/v1/users/${colleague.userId}`, { token: owner.token })).status).toBe(403);
  });

  it('the operator cannot delete itself, so an operator always remains', async () => {
    const me = await t.request('GET', '/v1/me');
    expect((await t.request('DELETE', `/v1/users/${me.body.user.id}`)).status).toBe(403);
  });
});
