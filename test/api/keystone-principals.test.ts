import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdentityBackend } from '../../src/domain/identity-backend.js';
import type { Principal } from '../../src/domain/identity.js';
import { KeystoneRefusedError } from '../../src/keystone/keystone-client.js';
import { startApp, type TestApp } from '../support/test-app.js';

/**
 * The API with Keystone's principals (LEASEHOLD_IDENTITY=keystone), the identity backend replaced by a table of
 * tokens (Keystone itself is exercised in test/unit/keystone-identity.test.ts and against a real Keystone in
 * test/keystone/): Keystone project ids as Leasehold's project ids — in Ironic's owner field, on leases, in events —
 * and Leasehold's own user and token management closed.
 */
const OWNER = { id: '0a1b2c3d4e5f60718293a4b5c6d7e8f9', name: 'owner-a' };
const LESSEE = { id: 'f9e8d7c6b5a4039281706f5e4d3c2b1a', name: 'lessee-x' };
const NODE = '4e0d3c2b-1a00-4000-8000-00000000000a';

const principal = (userId: string, userName: string, role: Principal['role'], project: { id: string; name: string } | null): Principal => ({
  userId,
  userName,
  role,
  projectId: project?.id ?? null,
  projectName: project?.name ?? null,
  tokenId: `keystone:${userId.slice(0, 8)}`,
  source: 'keystone',
});

const TOKENS: Record<string, Principal> = {
  'ks-owner': principal('11111111111111111111111111111111', 'a-member', 'member', OWNER),
  'ks-lessee': principal('22222222222222222222222222222222', 'x-member', 'member', LESSEE),
  'ks-reader': principal('33333333333333333333333333333333', 'x-reader', 'reader', LESSEE),
  'ks-admin': principal('44444444444444444444444444444444', 'admin', 'admin', null),
};

let t: TestApp;
/** What the sign-in sent to Keystone, and who it refused. */
const sentToKeystone: unknown[] = [];
/** Tokens revoked through the sign-out, and the tokens this process was told to forget. */
const revoked: string[] = [];
const forgotten: string[] = [];

beforeAll(async () => {
  t = await startApp({
    keystone: {
      url: 'http://keystone.test/v3',
      async issueWith(body, who) {
        sentToKeystone.push(body);
        const identity = (body as { auth: { identity: { password?: { user: { password: string } }; token?: unknown } } }).auth.identity;
        if (identity.password && identity.password.user.password !== 'right') throw new KeystoneRefusedError(`refused ${who}`);
        return { token: identity.token ? 'ks-owner' : 'ks-lessee', info: { expiresAt: new Date('2030-01-01T01:00:00Z') } };
      },
      async revokeToken(token) {
        revoked.push(token);
      },
      async userProjects(token) {
        return token === 'ks-lessee' ? [{ id: LESSEE.id, name: LESSEE.name, domainId: 'default' }, { id: OWNER.id, name: OWNER.name, domainId: 'default' }] : [];
      },
    },
    nodes: [{ uuid: NODE, name: 'node-a1', owner: OWNER.id, properties: { memory_mb: 65536, cpus: 16, local_gb: 480, cpu_arch: 'x86_64' } }],
    identity: ({ store, clock }): IdentityBackend => ({
      kind: 'keystone',
      async authenticate(token) {
        const p = TOKENS[token];
        if (!p) return null;
        // As KeystoneIdentity does: the project's row on first sight.
        if (p.projectId && p.projectName) await store.ensureProject(p.projectId, p.projectName, clock.now());
        return p;
      },
      async ping() {},
      forget(token) {
        forgotten.push(token);
      },
    }),
  });
});
afterAll(() => t.close());

describe('Keystone principals', () => {
  it('GET /v1/me says who the Keystone token is, with no local row behind it', async () => {
    const me = await t.request('GET', '/v1/me', { token: 'ks-lessee' });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      user: { id: TOKENS['ks-lessee']!.userId, name: 'x-member', project_id: LESSEE.id, project_name: LESSEE.name, role: 'member', created_at: null },
      project: LESSEE,
      identity: 'keystone',
    });
  });

  it("Leasehold's own users, tokens and project creation answer 409: identity is Keystone's", async () => {
    for (const [method, path, body] of [
      ['GET', '/v1/users', undefined],
      ['POST', '/v1/users', { name: 'x', project_id: LESSEE.id, role: 'member' }],
      ['GET', '/v1/tokens', undefined],
      ['POST', '/v1/tokens', { user_id: TOKENS['ks-lessee']!.userId }],
      ['POST', '/v1/projects', { name: 'new-project' }],
    ] as const) {
      const res = await t.request(method, path, { token: 'ks-admin', body });
      expect(res.status, `${method} ${path}`).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'conflict', details: { identity: 'keystone' } });
      expect(res.body.error.message).toMatch(/identity is managed by Keystone/);
    }
    // Quotas stay Leasehold's; names are Keystone's.
    await t.request('GET', '/v1/me', { token: 'ks-owner' });
    const quota = await t.request('PATCH', `/v1/projects/${OWNER.id}`, { token: 'ks-admin', body: { quota: { max_nodes: 5 } } });
    expect(quota.status, JSON.stringify(quota.body)).toBe(200);
    expect(quota.body).toMatchObject({ id: OWNER.id, name: 'owner-a', quota: { max_nodes: 5 } });
    expect((await t.request('PATCH', `/v1/projects/${OWNER.id}`, { token: 'ks-admin', body: { name: 'renamed' } })).status).toBe(409);
  });

  it("a node whose Ironic owner is a Keystone project id belongs to that project: it offers it, another project leases and powers it, and the lease and the audit log carry Keystone's ids", async () => {
    const owned = await t.request('GET', '/v1/nodes', { token: 'ks-owner' });
    expect(owned.body.nodes.map((n: { name: string; owner_project: unknown }) => [n.name, n.owner_project])).toEqual([['node-a1', OWNER]]);
    expect((await t.request('GET', '/v1/nodes', { token: 'ks-lessee' })).body.nodes).toEqual([]);

    expect((await t.request('POST', '/v1/offers', { token: 'ks-owner', body: { node_id: 'node-a1' } })).status).toBe(201);
    expect((await t.request('POST', '/v1/leases', { token: 'ks-reader', body: { nodes: ['node-a1'], duration: '1h' } })).status).toBe(403);
    const lease = await t.request('POST', '/v1/leases', { token: 'ks-lessee', body: { nodes: ['node-a1'], duration: '1h' } });
    expect(lease.status, JSON.stringify(lease.body)).toBe(201);
    expect(lease.body).toMatchObject({ project_id: LESSEE.id, project_name: 'lessee-x' });

    const power = await t.request('POST', '/v1/nodes/node-a1/power', { token: 'ks-lessee', body: { action: 'on' } });
    expect(power.status, JSON.stringify(power.body)).toBe(202);
    const events = await t.request('GET', `/v1/events?lease_id=${lease.body.id}`, { token: 'ks-lessee' });
    expect(events.body.events.find((e: { type: string }) => e.type === 'lease.created')).toMatchObject({ actor: 'x-member', project_id: LESSEE.id });
    const nodeEvents = await t.request('GET', `/v1/events?node_id=${NODE}&type=node.power`, { token: 'ks-owner' });
    // The owner sees the lessee's power action on its node (the event is filed under both projects).
    expect(nodeEvents.body.events[0]).toMatchObject({ actor: 'x-member', project_id: LESSEE.id });
  });

  it("a Keystone user's console token is issued to it, visible to it, and refused to anyone else", async () => {
    const opened = await t.request('POST', '/v1/nodes/node-a1/console', { token: 'ks-lessee' });
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    expect(opened.body.user_id).toBe(TOKENS['ks-lessee']!.userId);
    expect((await t.request('GET', `/v1/consoles/${opened.body.id}`, { token: 'ks-lessee' })).status).toBe(200);
    const grant = await t.store.consoles.grant(opened.body.id);
    expect(grant?.principal).toMatchObject({ userId: TOKENS['ks-lessee']!.userId, role: 'member', projectId: LESSEE.id, source: 'keystone' });
    expect((await t.request('GET', `/v1/consoles/${opened.body.id}`, { token: 'ks-reader' })).status).toBe(404);
  });
});

describe('the operator acting for a Keystone project', () => {
  it("a system-scoped admin (no project) books a lease for a Keystone project by id or name; the audit log names the admin; a member naming another project gets 403", async () => {
    const start = new Date(t.clock.now().getTime() + 5 * 3_600_000).toISOString();
    const byId = await t.request('POST', '/v1/leases', { token: 'ks-admin', body: { project: LESSEE.id, nodes: ['node-a1'], start, duration: '1h' } });
    expect(byId.status, JSON.stringify(byId.body)).toBe(201);
    expect(byId.body).toMatchObject({ project_id: LESSEE.id, project_name: 'lessee-x' });
    const events = await t.request('GET', `/v1/events?lease_id=${byId.body.id}&type=lease.created`, { token: 'ks-lessee' });
    expect(events.body.events).toEqual([expect.objectContaining({ actor: 'admin', project_id: LESSEE.id })]);
    const byName = await t.request('POST', '/v1/leases/quote', { token: 'ks-admin', body: { project: 'lessee-x', nodes: ['node-a1'], start: new Date(Date.parse(start) + 3 * 3_600_000).toISOString(), duration: '1h' } });
    expect(byName.status, JSON.stringify(byName.body)).toBe(200);
    const other = await t.request('POST', '/v1/leases/quote', { token: 'ks-lessee', body: { project: OWNER.id, nodes: ['node-a1'], duration: '1h' } });
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('forbidden');
  });
});

describe('signing in under Keystone (the web UI)', () => {
  it('says without a token how to sign in here', async () => {
    expect((await t.request('GET', '/v1/auth/methods', { token: null })).body).toEqual({ identity: 'keystone', methods: ['password', 'application_credential', 'token'] });
  });

  it("a password gets a Keystone token through Leasehold, the caller's identity with it; Leasehold asks Keystone with the credentials as given", async () => {
    const signed = await t.request('POST', '/v1/auth/tokens', {
      token: null,
      body: { password: { user: 'x-member', password: 'right', project: 'lessee-x' } },
    });
    expect(signed.status, JSON.stringify(signed.body)).toBe(201);
    expect(signed.body).toEqual({
      token: 'ks-lessee',
      expires_at: '2030-01-01T01:00:00.000Z',
      user: { id: TOKENS['ks-lessee']!.userId, name: 'x-member' },
      project: LESSEE,
      role: 'member',
    });
    expect(sentToKeystone.at(-1)).toEqual({
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'x-member', domain: { name: 'Default' }, password: 'right' } } },
        scope: { project: { name: 'lessee-x', domain: { name: 'Default' } } },
      },
    });
  });

  it('a refused password is a 401 naming who, never the password, and counts as a bad token for the address', async () => {
    const refused = await t.request('POST', '/v1/auth/tokens', { token: null, body: { password: { user: 'x-member', password: 'wrong' } } });
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toBe('Keystone refused the credentials of x-member');
    expect(JSON.stringify(refused.body)).not.toContain('wrong');
  });

  it('lists the projects a token may switch to, and switches with the current token', async () => {
    const list = await t.request('GET', '/v1/auth/projects', { token: 'ks-lessee' });
    expect(list.body).toEqual({ projects: [LESSEE, OWNER] });
    expect((await t.request('GET', '/v1/auth/projects', { token: null })).status).toBe(401);
    const switched = await t.request('POST', '/v1/auth/tokens', { token: 'ks-lessee', body: { token: { project: OWNER.id } } });
    expect(switched.status).toBe(201);
    expect(switched.body.project).toEqual(OWNER);
    expect(sentToKeystone.at(-1)).toEqual({ auth: { identity: { methods: ['token'], token: { id: 'ks-lessee' } }, scope: { project: { id: OWNER.id } } } });
    expect((await t.request('POST', '/v1/auth/tokens', { token: null, body: { token: { project: OWNER.id } } })).status).toBe(401);
  });

  it("signing out revokes the caller's own Keystone token there and forgets it here; without a token it is a 401", async () => {
    const out = await t.request('DELETE', '/v1/auth/tokens', { token: 'ks-reader' });
    expect(out.status, JSON.stringify(out.body)).toBe(204);
    expect(revoked).toEqual(['ks-reader']);
    expect(forgotten).toEqual(['ks-reader']);
    expect((await t.request('DELETE', '/v1/auth/tokens', { token: null })).status).toBe(401);
    expect(revoked).toEqual(['ks-reader']);
  });
});
