import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createProjectUser, startTestApp, type TestApp } from '../support/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

async function projectCount(): Promise<number> {
  return (await t.request('GET', '/v1/projects?limit=1000')).body.projects.length;
}

describe('identity', () => {
  it('the operator creates a project, a user in it and a token that works at once', async () => {
    const project = await t.request('POST', '/v1/projects', { body: { name: 'astro', description: 'Astronomy' } });
    expect(project.status).toBe(201);
    expect(project.body).toMatchObject({
      name: 'astro',
      description: 'Astronomy',
      quota: { max_nodes: null, max_lease_duration: null, max_node_hours: null },
    });
    expect(project.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const user = await t.request('POST', '/v1/users', { body: { name: 'vera', project_id: 'astro', role: 'member' } });
    expect(user.status).toBe(201);
    expect(user.body).toMatchObject({ name: 'vera', project_id: project.body.id, role: 'member' });

    const token = await t.request('POST', '/v1/tokens', { body: { user_id: user.body.id, description: 'laptop' } });
    expect(token.status).toBe(201);
    expect(token.body.token).toMatch(/^lh_[A-Za-z0-9_-]{43}$/);
    expect(token.body).toMatchObject({ user_id: user.body.id, description: 'laptop', revoked_at: null });

    const me = await t.request('GET', '/v1/me', { token: token.body.token });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      user: expect.objectContaining({ id: user.body.id, name: 'vera', role: 'member' }),
      project: { id: project.body.id, name: 'astro' },
      identity: 'local',
    });
  });

  it('accepts the token in X-Auth-Token, as OpenStack clients send it', async () => {
    const me = await t.request('GET', '/v1/me', { token: null, headers: { 'x-auth-token': ADMIN_TOKEN } });
    expect(me.status).toBe(200);
    expect(me.body.user).toMatchObject({ name: 'admin', role: 'admin', project_id: null });
  });

  it('answers 401 in the one error shape without a token or with an unknown one', async () => {
    for (const token of [null, 'lh_nope']) {
      const res = await t.request('GET', '/v1/projects', { token });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: { code: 'unauthenticated', message: expect.any(String), details: {} } });
    }
  });

  it('never shows a token value again after it was issued', async () => {
    const { userId } = await createProjectUser(t, 'secretive');
    const list = await t.request('GET', `/v1/tokens?user_id=${userId}`);
    expect(list.status).toBe(200);
    expect(list.body.tokens).toHaveLength(1);
    expect(list.body.tokens[0].token).toBeUndefined();
    expect(JSON.stringify(list.body)).not.toMatch(/lh_[A-Za-z0-9_-]{43}/);
  });

  it('a revoked token stops working on the next request', async () => {
    const { token } = await createProjectUser(t, 'revokers');
    const me = await t.request('GET', '/v1/me', { token });
    expect(me.status).toBe(200);
    const tokens = await t.request('GET', '/v1/tokens', { token });
    const own = tokens.body.tokens[0];
    expect((await t.request('DELETE', `/v1/tokens/${own.id}`, { token })).status).toBe(204);
    expect((await t.request('GET', '/v1/me', { token })).status).toBe(401);
  });

  it('an expired token stops working the moment it expires', async () => {
    const { userId } = await createProjectUser(t, 'expiring');
    const expiresAt = new Date(t.clock.now().getTime() + 60_000).toISOString();
    const issued = await t.request('POST', '/v1/tokens', { body: { user_id: userId, expires_at: expiresAt } });
    expect(issued.status).toBe(201);
    expect(issued.body.expires_at).toBe(expiresAt);
    expect((await t.request('GET', '/v1/me', { token: issued.body.token })).status).toBe(200);
    await t.clock.advance(60_000);
    expect((await t.request('GET', '/v1/me', { token: issued.body.token })).status).toBe(401);
  });

  it('refuses a token that would already be expired', async () => {
    const { userId } = await createProjectUser(t, 'pastexpiry');
    const res = await t.request('POST', '/v1/tokens', {
      body: { user_id: userId, expires_at: '2000-01-01T00:00:00Z' },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
  });

  it("a project manager adds users to its own project, but not operators and not to other projects", async () => {
    const mgr = await createProjectUser(t, 'chem', 'manager');
    await t.request('POST', '/v1/projects', { body: { name: 'geo' } });
    const ok = await t.request('POST', '/v1/users', {
      token: mgr.token,
      body: { name: 'chem-student', project_id: 'chem', role: 'reader' },
    });
    expect(ok.status).toBe(201);
    const admin = await t.request('POST', '/v1/users', { token: mgr.token, body: { name: 'evil', role: 'admin' } });
    expect(admin.status).toBe(403);
    const other = await t.request('POST', '/v1/users', {
      token: mgr.token,
      body: { name: 'geo-spy', project_id: 'geo', role: 'reader' },
    });
    expect(other.status).toBe(400);
    expect(other.body.error.message).toContain('no project');
    const issued = await t.request('POST', '/v1/tokens', { token: mgr.token, body: { user_id: ok.body.id } });
    expect(issued.status).toBe(201);
  });

  it('a member can neither create users nor issue tokens for others', async () => {
    const member = await createProjectUser(t, 'bio', 'member');
    const peer = await createProjectUser(t, 'bio', 'reader');
    const user = await t.request('POST', '/v1/users', {
      token: member.token,
      body: { name: 'bio-new', project_id: 'bio', role: 'reader' },
    });
    expect(user.status).toBe(403);
    const token = await t.request('POST', '/v1/tokens', { token: member.token, body: { user_id: peer.userId } });
    expect(token.status).toBe(403);
    const own = await t.request('POST', '/v1/tokens', { token: member.token, body: { user_id: member.userId } });
    expect(own.status).toBe(201);
  });

  it('a project sees only itself; other projects are 404, not 403', async () => {
    const a = await createProjectUser(t, 'alpha', 'manager');
    await createProjectUser(t, 'beta', 'manager');
    const list = await t.request('GET', '/v1/projects', { token: a.token });
    expect(list.body.projects.map((p: { name: string }) => p.name)).toEqual(['alpha']);
    expect((await t.request('GET', '/v1/projects/beta', { token: a.token })).status).toBe(404);
    expect((await t.request('GET', '/v1/projects/alpha', { token: a.token })).status).toBe(200);
    const users = await t.request('GET', '/v1/users', { token: a.token });
    expect(users.body.users.every((u: { project_id: string }) => u.project_id === a.projectId)).toBe(true);
  });

  it('only the operator changes quotas; a patch changes only what it names', async () => {
    const mgr = await createProjectUser(t, 'quota-lab', 'manager');
    const denied = await t.request('PATCH', '/v1/projects/quota-lab', {
      token: mgr.token,
      body: { quota: { max_nodes: 99 } },
    });
    expect(denied.status).toBe(403);
    const first = await t.request('PATCH', '/v1/projects/quota-lab', {
      body: { quota: { max_nodes: 4, max_lease_duration: '5d' } },
    });
    expect(first.status).toBe(200);
    expect(first.body.quota).toEqual({ max_nodes: 4, max_lease_duration: 'P5D', max_node_hours: null });
    const second = await t.request('PATCH', `/v1/projects/${mgr.projectId}`, { body: { quota: { max_nodes: null } } });
    expect(second.body.quota).toEqual({ max_nodes: null, max_lease_duration: 'P5D', max_node_hours: null });
  });

  it('pages through projects with a next link that keeps the filters', async () => {
    for (const name of ['page-a', 'page-b', 'page-c']) await t.request('POST', '/v1/projects', { body: { name } });
    const seen: string[] = [];
    let next: string | null = '/v1/projects?limit=2';
    while (next) {
      const res = await t.request('GET', next);
      expect(res.status).toBe(200);
      expect(res.body.projects.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.projects.map((p: { name: string }) => p.name));
      next = res.body.next;
      if (next) expect(next).toContain('limit=2');
    }
    expect(seen).toEqual([...seen].sort());
    expect(seen).toEqual(expect.arrayContaining(['page-a', 'page-b', 'page-c']));
    expect(new Set(seen).size).toBe(seen.length);
  });
});

describe('bad input', () => {
  it.each([
    ['missing name', {}],
    ['wrong type', { name: 42 }],
    ['empty name', { name: '' }],
    ['unknown field', { name: 'x-ok', colour: 'red' }],
    ['bad characters', { name: 'has space' }],
  ])('POST /v1/projects with %s is a 400 naming the field and creates nothing', async (_label, body) => {
    const before = await projectCount();
    const res = await t.request('POST', '/v1/projects', { body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toMatch(/body/);
    expect(await projectCount()).toBe(before);
  });

  it('malformed JSON is a 400 in the one error shape', async () => {
    const res = await t.request('POST', '/v1/projects', { rawBody: '{"name": ' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/JSON/i) });
  });

  it('a body that is not JSON is refused', async () => {
    const res = await t.request('POST', '/v1/projects', {
      rawBody: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expect(res.body.error.code).toBe('unsupported_media_type');
  });

  it('a taken project name is a 409 already_exists and changes nothing', async () => {
    await t.request('POST', '/v1/projects', { body: { name: 'dup' } });
    const before = await projectCount();
    const res = await t.request('POST', '/v1/projects', { body: { name: 'dup' } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('already_exists');
    expect(await projectCount()).toBe(before);
  });

  it('a user with an unknown role or project is a 400', async () => {
    const role = await t.request('POST', '/v1/users', { body: { name: 'r1', project_id: 'dup', role: 'god' } });
    expect(role.status).toBe(400);
    const project = await t.request('POST', '/v1/users', { body: { name: 'r2', project_id: 'nowhere', role: 'reader' } });
    expect(project.status).toBe(400);
    const noProject = await t.request('POST', '/v1/users', { body: { name: 'r3', role: 'reader' } });
    expect(noProject.status).toBe(400);
    expect((await t.request('GET', '/v1/users?limit=1000')).body.users.map((u: { name: string }) => u.name)).not.toEqual(
      expect.arrayContaining(['r1', 'r2', 'r3']),
    );
  });

  it('unknown or malformed ids are 404, never 500', async () => {
    for (const path of ['/v1/users/not-a-uuid', '/v1/users/00000000-0000-4000-8000-000000000000', '/v1/tokens/zzz', '/v1/projects/nope']) {
      const res = await t.request('GET', path);
      expect(res.status, path).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect((await t.request('DELETE', '/v1/tokens/not-a-uuid')).status).toBe(404);
  });

  it('a bad limit is a 400', async () => {
    expect((await t.request('GET', '/v1/projects?limit=0')).status).toBe(400);
    expect((await t.request('GET', '/v1/projects?limit=5000')).status).toBe(400);
    expect((await t.request('GET', '/v1/projects?limit=ten')).status).toBe(400);
  });
});
