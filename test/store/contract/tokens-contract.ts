import { describe, expect, it } from 'vitest';
import { AlreadyExistsError, NotFoundError } from '../../../src/domain/errors.js';
import type { Store } from '../../../src/store/store.js';
import { allPages, at, HOUR, nodeRecord, T0, type OpenFreshStore, useFreshStores } from './fixtures.js';

const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';

async function member(store: Store, projectName = 'physics-lab', userName = 'ada') {
  const project = (await store.findProject(projectName)) ?? (await store.createProject({ name: projectName }, T0));
  const user = await store.createUser({ name: userName, project_id: project.id, role: 'member' }, T0);
  return { project, user };
}

export function tokensContract(open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  describe('tokens', () => {
    it('reads a token with a node in one query as authenticate and nodeWithLease read them apart, again and again (a prepared statement)', async () => {
      const store = await fresh();
      const { user } = await member(store);
      const token = await store.createToken({ user_id: user.id, token_hash: 'tn', prefix: 'p', expires_at: at(2 * HOUR) }, T0);
      await store.upsertNode(nodeRecord('n1', { name: "o'brien\\01" }), T0);
      // Past PostgreSQL's five custom plans of a prepared statement: the generic plan answers alike.
      for (let i = 1; i <= 8; i++) {
        const both = await store.tokenWithNode('tn', 'n1', at(i));
        expect(both).toEqual({ principal: await store.authenticate('tn', at(i)), found: await store.nodeWithLease('n1', at(i)) });
        expect(both?.found?.node.id).toBe('n1');
      }
      expect((await store.tokenWithNode('tn', "o'brien\\01", at(1)))?.found?.node.id).toBe('n1');
      expect(await store.tokenWithNode('tn', 'no-such-node', at(1))).toEqual({ principal: await store.authenticate('tn', at(1)), found: null });
      expect(await store.tokenWithNode('unknown', 'n1', at(1))).toBeNull();
      expect(await store.tokenWithNode('tn', 'n1', at(2 * HOUR))).toBeNull();
      await store.revokeToken(token.id, at(10));
      expect(await store.tokenWithNode('tn', 'n1', at(11))).toBeNull();
    });

    it('creates a token that authenticates as its user and project', async () => {
      const store = await fresh();
      const { project, user } = await member(store);
      const token = await store.createToken({ user_id: user.id, token_hash: 'h1', prefix: 'lh_abc', description: 'ci' }, at(1));
      expect(token).toEqual({
        id: expect.any(String),
        user_id: user.id,
        prefix: 'lh_abc',
        description: 'ci',
        created_at: at(1),
        expires_at: null,
        revoked_at: null,
      });
      expect(token).not.toHaveProperty('token_hash');
      expect(await store.getToken(token.id)).toEqual(token);
      expect(await store.authenticate('h1', at(2))).toEqual({
        userId: user.id,
        userName: 'ada',
        role: 'member',
        projectId: project.id,
        projectName: 'physics-lab',
        tokenId: token.id,
      });
    });

    it('an unknown token hash does not authenticate', async () => {
      const store = await fresh();
      expect(await store.authenticate('nothing-like-it', T0)).toBeNull();
    });

    it('a token for a user that does not exist is NotFoundError', async () => {
      const store = await fresh();
      await expect(store.createToken({ user_id: UNKNOWN_UUID, token_hash: 'h', prefix: 'p' }, T0)).rejects.toMatchObject({
        constructor: NotFoundError,
        details: { resource: 'user', id: UNKNOWN_UUID },
      });
      await expect(store.createToken({ user_id: 'ada', token_hash: 'h', prefix: 'p' }, T0)).rejects.toBeInstanceOf(NotFoundError);
    });

    it('a token hash can be stored only once', async () => {
      const store = await fresh();
      const { user } = await member(store);
      await store.createToken({ user_id: user.id, token_hash: 'same', prefix: 'p' }, T0);
      await expect(store.createToken({ user_id: user.id, token_hash: 'same', prefix: 'p' }, T0)).rejects.toBeInstanceOf(
        AlreadyExistsError,
      );
    });

    it('a token stops authenticating at the instant it expires', async () => {
      const store = await fresh();
      const { user } = await member(store);
      await store.createToken({ user_id: user.id, token_hash: 'h', prefix: 'p', expires_at: at(HOUR) }, T0);
      expect(await store.authenticate('h', at(HOUR - 1))).not.toBeNull();
      expect(await store.authenticate('h', at(HOUR))).toBeNull();
      expect(await store.authenticate('h', at(2 * HOUR))).toBeNull();
    });

    it('authenticates several tokens in one read exactly as one by one: each at its own instant, revoked and unknown ones null', async () => {
      const store = await fresh();
      const { user } = await member(store);
      await store.createToken({ user_id: user.id, token_hash: 'live', prefix: 'p' }, T0);
      await store.createToken({ user_id: user.id, token_hash: 'expiring', prefix: 'p', expires_at: at(HOUR) }, T0);
      const revoked = await store.createToken({ user_id: user.id, token_hash: 'revoked', prefix: 'p' }, T0);
      await store.revokeToken(revoked.id, at(1));
      const asks = [
        { tokenHash: 'expiring', now: at(HOUR - 1) },
        { tokenHash: 'expiring', now: at(HOUR) },
        { tokenHash: 'revoked', now: at(2) },
        { tokenHash: 'unknown', now: at(2) },
        { tokenHash: 'live', now: at(2 * HOUR) },
      ];
      const many = await store.authenticateMany(asks);
      const one = await Promise.all(asks.map((a) => store.authenticate(a.tokenHash, a.now)));
      expect(many).toEqual(one);
      expect(many.map((p) => p?.userName ?? null)).toEqual(['ada', null, null, null, 'ada']);
      expect(await store.authenticateMany([])).toEqual([]);
    });

    it('a revoked token no longer authenticates, and revoking again keeps the first revocation time', async () => {
      const store = await fresh();
      const { user } = await member(store);
      const token = await store.createToken({ user_id: user.id, token_hash: 'h', prefix: 'p' }, T0);
      const revoked = await store.revokeToken(token.id, at(10));
      expect(revoked).toEqual({ ...token, revoked_at: at(10) });
      expect(await store.authenticate('h', at(11))).toBeNull();
      expect(await store.revokeToken(token.id, at(20))).toEqual(revoked);
      expect(await store.getToken(token.id)).toEqual(revoked);
    });

    it('revoking a token that does not exist is NotFoundError', async () => {
      const store = await fresh();
      await expect(store.revokeToken(UNKNOWN_UUID, T0)).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.revokeToken('junk', T0)).rejects.toBeInstanceOf(NotFoundError);
      expect(await store.getToken(UNKNOWN_UUID)).toBeNull();
      expect(await store.getToken('junk')).toBeNull();
    });

    it("lists tokens by creation time across pages, per user and per project's users", async () => {
      const store = await fresh();
      const { user: ada } = await member(store, 'physics-lab', 'ada');
      const { user: bob } = await member(store, 'physics-lab', 'bob');
      const { user: eve } = await member(store, 'bio-lab', 'eve');
      const times = [5, 1, 4, 2, 3];
      for (const [i, t] of times.entries()) {
        await store.createToken({ user_id: i % 2 === 0 ? ada.id : bob.id, token_hash: `h${i}`, prefix: `p${t}` }, at(t));
      }
      // Two tokens created in the same millisecond still get a stable order (by id).
      await store.createToken({ user_id: ada.id, token_hash: 'tie', prefix: 'p3b' }, at(3));
      await store.createToken({ user_id: eve.id, token_hash: 'other', prefix: 'x' }, at(0));

      const project = (await store.findProject('physics-lab'))!;
      const pages = await allPages((marker) => store.listTokens({ project_id: project.id }, { limit: 2, marker }));
      const listed = pages.flat();
      expect(pages.map((page) => page.length)).toEqual([2, 2, 2]);
      expect(listed.map((t) => t.created_at.getTime() - T0.getTime())).toEqual([1, 2, 3, 3, 4, 5]);
      expect(new Set(listed.map((t) => t.id)).size).toBe(6);

      const adas = await store.listTokens({ user_id: ada.id }, { limit: 10 });
      expect(adas.items.map((t) => t.prefix)).toEqual(expect.arrayContaining(['p5', 'p4', 'p3', 'p3b']));
      expect(adas.items).toHaveLength(4);
      expect((await store.listTokens({}, { limit: 10 })).items).toHaveLength(7);
      expect((await store.listTokens({ user_id: eve.id, project_id: project.id }, { limit: 10 })).items).toEqual([]);
    });
  });

  describe('bootstrapAdmin', () => {
    it('creates the admin and its token on an empty store, only once', async () => {
      const store = await fresh();
      const token = { token_hash: 'admin-hash', prefix: 'lh_adm', description: 'bootstrap' };
      expect(await store.bootstrapAdmin({ userName: 'admin', token }, T0)).toBe(true);
      const principal = await store.authenticate('admin-hash', at(1));
      expect(principal).toMatchObject({ userName: 'admin', role: 'admin', projectId: null, projectName: null });
      expect(await store.bootstrapAdmin({ userName: 'admin2', token: { token_hash: 'other', prefix: 'x' } }, at(2))).toBe(false);
      expect(await store.authenticate('other', at(3))).toBeNull();
      const users = await store.listUsers({}, { limit: 10 });
      expect(users.items.map((u) => u.name)).toEqual(['admin']);
      expect(await store.getToken(principal!.tokenId)).toMatchObject({ description: 'bootstrap', created_at: T0 });
    });

    it('does nothing when any user exists already', async () => {
      const store = await fresh();
      await member(store);
      expect(await store.bootstrapAdmin({ userName: 'admin', token: { token_hash: 'h', prefix: 'p' } }, T0)).toBe(false);
      expect(await store.authenticate('h', T0)).toBeNull();
    });
  });

  describe('connection', () => {
    it('answers a ping while open and reports the backend unavailable once closed', async () => {
      const store = await fresh();
      await expect(store.ping()).resolves.toBeUndefined();
      await store.close();
      await store.close(); // closing twice is harmless
      await expect(store.ping()).rejects.toMatchObject({ code: 'backend_unavailable', retryable: true });
    });
  });
}
