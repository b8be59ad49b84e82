import { describe, expect, it } from 'vitest';
import { AlreadyExistsError, NotFoundError } from '../../../src/domain/errors.js';
import type { Store } from '../../../src/store/store.js';
import { at, HOUR, nodeRecord, T0, type OpenFreshStore, useFreshStores } from './fixtures.js';

const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';
const MINUTE = 60_000;

async function world(store: Store) {
  const project = await store.createProject({ name: 'physics-lab' }, T0);
  const user = await store.createUser({ name: 'ada', project_id: project.id, role: 'member' }, T0);
  await store.syncNodes([nodeRecord('n1'), nodeRecord('n2')], T0);
  return { project, user };
}

export function consoleContract(open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  describe('console tokens', () => {
    it('stores a token by hash for one node and finds it, with its creator as a principal', async () => {
      const store = await fresh();
      const { project, user } = await world(store);
      const token = await store.consoles.create({ node_id: 'n1', user_id: user.id, token_hash: 'c1', expires_at: at(10 * MINUTE) }, [], at(1));
      expect(token).toEqual({ id: expect.any(String), node_id: 'n1', user_id: user.id, issued_to: user.id, created_at: at(1), expires_at: at(10 * MINUTE), revoked_at: null });
      expect(token).not.toHaveProperty('token_hash');
      expect(await store.consoles.get(token.id)).toEqual(token);
      const principal = { userId: user.id, userName: 'ada', role: 'member', projectId: project.id, projectName: 'physics-lab', tokenId: token.id };
      expect(await store.consoles.findByHash('c1')).toEqual({ token, principal });
      expect(await store.consoles.grant(token.id)).toEqual({ token, principal });
      expect(await store.consoles.findByHash('nothing-like-it')).toBeNull();
      expect(await store.consoles.grant(UNKNOWN_UUID)).toBeNull();
      expect(await store.consoles.get('not-a-uuid')).toBeNull();
    });

    it("a Keystone user's token (no users row) keeps the identity it was issued to, and is re-checked as that", async () => {
      const store = await fresh();
      const { project } = await world(store);
      const who = { userId: '5f2b6c0a9e3d4b7a8c1e2f3a4b5c6d7e', userName: 'kai', role: 'member' as const, projectId: project.id, projectName: 'physics-lab' };
      const token = await store.consoles.create({ node_id: 'n1', user_id: null, principal: who, token_hash: 'k1', expires_at: at(HOUR) }, [], T0);
      expect(token).toMatchObject({ user_id: null, issued_to: who.userId });
      const principal = { ...who, tokenId: token.id, source: 'keystone' };
      expect(await store.consoles.findByHash('k1')).toEqual({ token, principal });
      expect((await store.consoles.accessStates([token.id], T0)).get(token.id)?.grant).toEqual({ token, principal });
    });

    it('a token of an operator carries the admin role and no project', async () => {
      const store = await fresh();
      const { user } = await world(store);
      await store.consoles.create({ node_id: 'n1', user_id: user.id, token_hash: 'c1', expires_at: at(HOUR) }, [], T0);
      const admin = await store.createUser({ name: 'root', project_id: null, role: 'admin' }, T0);
      await store.consoles.create({ node_id: 'n2', user_id: admin.id, token_hash: 'c2', expires_at: at(HOUR) }, [], T0);
      expect((await store.consoles.findByHash('c2'))?.principal).toMatchObject({ role: 'admin', projectId: null, projectName: null });
    });

    it('returns expired and revoked tokens as they are (the console says which refused it)', async () => {
      const store = await fresh();
      const { user } = await world(store);
      const token = await store.consoles.create({ node_id: 'n1', user_id: user.id, token_hash: 'c1', expires_at: at(MINUTE) }, [], T0);
      await store.consoles.revoke(token.id, [], at(30_000));
      expect((await store.consoles.findByHash('c1'))?.token).toMatchObject({ expires_at: at(MINUTE), revoked_at: at(30_000) });
    });

    it('revokes once: the first revocation time stands, and its events are written once', async () => {
      const store = await fresh();
      const { user } = await world(store);
      const token = await store.consoles.create(
        { node_id: 'n1', user_id: user.id, token_hash: 'c1', expires_at: at(HOUR) },
        [{ type: 'console.token_issued', actor: 'ada', node_id: 'n1' }],
        T0,
      );
      const event = { type: 'console.token_revoked', actor: 'ada', node_id: 'n1' };
      expect(await store.consoles.revoke(token.id, [event], at(10))).toEqual({ ...token, revoked_at: at(10) });
      expect(await store.consoles.revoke(token.id, [event], at(20))).toEqual({ ...token, revoked_at: at(10) });
      const events = await store.leasing.listEvents({ node_id: 'n1' }, { limit: 10 });
      expect(events.items.map((e) => [e.type, e.details])).toEqual([
        ['console.token_revoked', { console_id: token.id }],
        ['console.token_issued', { console_id: token.id }],
      ]);
    });

    it('a token for a node or user that does not exist is NotFoundError; revoking an unknown token too', async () => {
      const store = await fresh();
      const { user } = await world(store);
      await expect(store.consoles.create({ node_id: 'nope', user_id: user.id, token_hash: 'c', expires_at: at(HOUR) }, [], T0)).rejects.toMatchObject({
        constructor: NotFoundError,
        details: { resource: 'node', id: 'nope' },
      });
      await expect(store.consoles.create({ node_id: 'n1', user_id: UNKNOWN_UUID, token_hash: 'c', expires_at: at(HOUR) }, [], T0)).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.consoles.create({ node_id: 'n1', user_id: 'ada', token_hash: 'c', expires_at: at(HOUR) }, [], T0)).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.consoles.revoke(UNKNOWN_UUID, [], T0)).rejects.toBeInstanceOf(NotFoundError);
      await expect(store.consoles.revoke('not-a-uuid', [], T0)).rejects.toBeInstanceOf(NotFoundError);
    });

    it('a token hash can be stored only once, and the error does not repeat it', async () => {
      const store = await fresh();
      const { user } = await world(store);
      await store.consoles.create({ node_id: 'n1', user_id: user.id, token_hash: 'secret-hash', expires_at: at(HOUR) }, [], T0);
      const err = await store.consoles
        .create({ node_id: 'n2', user_id: user.id, token_hash: 'secret-hash', expires_at: at(HOUR) }, [], T0)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AlreadyExistsError);
      expect(String((err as Error).message)).not.toContain('secret-hash');
    });
  });
}
