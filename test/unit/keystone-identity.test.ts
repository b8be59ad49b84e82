import { afterEach, describe, expect, it } from 'vitest';
import { BackendUnavailableError, ForbiddenError } from '../../src/domain/errors.js';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { KeystoneIdentity } from '../../src/identity/keystone-identity.js';
import { KeystoneRefusedError } from '../../src/keystone/keystone-client.js';
import type { KeystoneSession } from '../../src/keystone/keystone-session.js';
import type { KeystoneTokenInfo } from '../../src/keystone/keystone-token.js';
import { createLogger } from '../../src/logger.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';

const PHYSICS = { id: '8c0f5f3b5d7a4b0e9d2c1a3b4c5d6e7f', name: 'physics-lab', domainName: 'Default' };
const HOUR = 3_600_000;

/** Keystone as KeystoneIdentity sees it: the service session and what each user token says (or null: unknown). */
function fakeKeystone(clock: ManualClock) {
  const tokens = new Map<string, KeystoneTokenInfo | null>();
  const calls = { validate: 0, serviceTokens: 0 };
  let service = 'service-token-1';
  let refuseService: string | null = null;
  let down = false;
  const session = {
    async token() {
      calls.serviceTokens++;
      return service;
    },
    invalidate(token: string) {
      if (token === service) service = `service-token-${Number(service.split('-').pop()) + 1}`;
    },
    client: {
      async validateToken(serviceToken: string, subject: string) {
        calls.validate++;
        if (down) throw new BackendUnavailableError('Keystone at http://keystone.test/v3 is unreachable (ECONNREFUSED)');
        if (serviceToken === refuseService) throw new KeystoneRefusedError("Keystone refused Leasehold's own token (401)");
        return tokens.has(subject) ? tokens.get(subject)! : null;
      },
      async ping() {
        if (down) throw new BackendUnavailableError('unreachable');
      },
    },
  } as unknown as KeystoneSession;
  const token = (roles: string[], over: Partial<KeystoneTokenInfo> = {}): KeystoneTokenInfo => ({
    user: { id: 'aa11bb22cc33dd44ee55ff6600778899', name: 'ada', domainName: 'Default' },
    project: PHYSICS,
    system: false,
    roles,
    expiresAt: new Date(clock.now().getTime() + HOUR),
    issuedAt: clock.now(),
    catalog: [],
    ...over,
  });
  return {
    session,
    calls,
    token,
    issue(value: string, info: KeystoneTokenInfo | null) {
      tokens.set(value, info);
    },
    refuse(value: string) {
      refuseService = value;
    },
    setDown(value: boolean) {
      down = value;
    },
  };
}

describe('Keystone tokens as Leasehold principals', () => {
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  async function setup(options: Partial<ConstructorParameters<typeof KeystoneIdentity>[1]> = {}) {
    const clock = new ManualClock('2030-01-01T00:00:00Z');
    store = await openStore({ dataDir: 'memory://' });
    const keystone = fakeKeystone(clock);
    const identity = new KeystoneIdentity(
      { session: keystone.session, store, clock, logger: createLogger('silent') },
      { cacheTtlMs: 30_000, adminProject: 'admin', ...options },
    );
    return { clock, keystone, identity, store };
  }

  it("a project-scoped token is its project's member with the highest role it carries, and the project gets its row on first sight", async () => {
    const { keystone, identity, store } = await setup();
    keystone.issue('tok-ada', keystone.token(['reader', 'member']));
    const principal = await identity.authenticate('tok-ada');
    expect(principal).toMatchObject({
      userId: 'aa11bb22cc33dd44ee55ff6600778899',
      userName: 'ada',
      role: 'member',
      projectId: PHYSICS.id,
      projectName: 'physics-lab',
      source: 'keystone',
    });
    expect(principal!.tokenId).not.toContain('tok-ada');
    expect(await store.findProject(PHYSICS.id)).toMatchObject({ id: PHYSICS.id, name: 'physics-lab' });
  });

  it("a validation is reused for the cache's time and never past the token's own expiry; a revoked token stops working when it runs out", async () => {
    const { clock, keystone, identity } = await setup({ cacheTtlMs: 30_000 });
    keystone.issue('tok', keystone.token(['member'], { expiresAt: new Date(clock.now().getTime() + 45_000) }));
    await identity.authenticate('tok');
    await identity.authenticate('tok');
    expect(keystone.calls.validate).toBe(1);

    keystone.issue('tok', null); // revoked in Keystone
    await clock.advance(29_999);
    expect(await identity.authenticate('tok')).not.toBeNull(); // the documented lag
    await clock.advance(1);
    expect(await identity.authenticate('tok')).toBeNull();
    expect(keystone.calls.validate).toBe(2);

    // A token expiring before the cache would run out is not served past its expiry.
    keystone.issue('short', keystone.token(['member'], { expiresAt: new Date(clock.now().getTime() + 5_000) }));
    expect(await identity.authenticate('short')).not.toBeNull();
    keystone.issue('short', null);
    await clock.advance(5_000);
    expect(await identity.authenticate('short')).toBeNull();
  });

  it('a system-scoped admin and an admin of the admin project are the operator; an admin elsewhere manages its project', async () => {
    const { keystone, identity } = await setup();
    keystone.issue('system', keystone.token(['admin', 'member', 'reader'], { project: null, system: true }));
    keystone.issue('admin-project', keystone.token(['admin'], { project: { id: 'ad000000000000000000000000000001', name: 'admin', domainName: 'Default' } }));
    keystone.issue('project-admin', keystone.token(['admin']));
    expect(await identity.authenticate('system')).toMatchObject({ role: 'admin', projectId: null, projectName: null });
    expect(await identity.authenticate('admin-project')).toMatchObject({ role: 'admin', projectId: null });
    expect(await identity.authenticate('project-admin')).toMatchObject({ role: 'manager', projectId: PHYSICS.id });
  });

  it('a token with no role Leasehold knows, or without a project, is refused with a reason', async () => {
    const { keystone, identity } = await setup();
    keystone.issue('service-only', keystone.token(['service']));
    keystone.issue('unscoped', keystone.token(['member'], { project: null }));
    await expect(identity.authenticate('service-only')).rejects.toBeInstanceOf(ForbiddenError);
    await expect(identity.authenticate('unscoped')).rejects.toThrow(/scoped to a project/);
  });

  it("the policy file's role map names other Keystone roles", async () => {
    const { keystone, identity } = await setup({ roles: { reader: ['observer'], member: ['member'], manager: ['project-admin'], admin: ['admin'] } });
    keystone.issue('observer', keystone.token(['observer']));
    keystone.issue('pa', keystone.token(['project-admin']));
    expect(await identity.authenticate('observer')).toMatchObject({ role: 'reader' });
    expect(await identity.authenticate('pa')).toMatchObject({ role: 'manager' });
  });

  it('a service token Keystone refuses is replaced once, and the validation made again', async () => {
    const { keystone, identity } = await setup();
    keystone.issue('tok', keystone.token(['member']));
    keystone.refuse('service-token-1');
    expect(await identity.authenticate('tok')).toMatchObject({ role: 'member' });
    expect(keystone.calls.validate).toBe(2);
  });

  it('Keystone unreachable is BackendUnavailableError (a 503), never "unknown token" (a 401); a cached token still works', async () => {
    const { keystone, identity } = await setup();
    keystone.issue('cached', keystone.token(['member']));
    await identity.authenticate('cached');
    keystone.setDown(true);
    await expect(identity.authenticate('new')).rejects.toBeInstanceOf(BackendUnavailableError);
    expect(await identity.authenticate('cached')).toMatchObject({ role: 'member' });
    await expect(identity.ping()).rejects.toThrow(/unreachable/);
  });

  it("a project renamed in Keystone is renamed here; a name another project holds gets the project's id appended", async () => {
    const { keystone, identity, store } = await setup({ cacheTtlMs: 0 });
    await store.createProject({ name: 'bio-lab' }, new Date());
    keystone.issue('tok', keystone.token(['member'], { project: { ...PHYSICS, name: 'physics' } }));
    expect(await identity.authenticate('tok')).toMatchObject({ projectName: 'physics' });
    keystone.issue('tok', keystone.token(['member'], { project: { ...PHYSICS, name: 'bio-lab' } }));
    expect(await identity.authenticate('tok')).toMatchObject({ projectId: PHYSICS.id, projectName: `bio-lab (${PHYSICS.id})` });
  });
});
