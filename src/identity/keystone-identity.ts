import { createHash } from 'node:crypto';
import type { Clock } from '../domain/clock.js';
import { ForbiddenError } from '../domain/errors.js';
import { DEFAULT_KEYSTONE_ROLES, type IdentityBackend, type KeystoneRoleMap } from '../domain/identity-backend.js';
import { Role, type Principal } from '../domain/identity.js';
import { KeystoneRefusedError } from '../keystone/keystone-client.js';
import type { KeystoneSession } from '../keystone/keystone-session.js';
import type { KeystoneTokenInfo } from '../keystone/keystone-token.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/store.js';

export interface KeystoneIdentityOptions {
  /** How long a validation is reused (KEYSTONE_TOKEN_CACHE_TTL, default 30 s): the revocation lag it allows. */
  readonly cacheTtlMs: number;
  /** The project whose `admin` members are the operator, as Keystone's own admin project (default `admin`). */
  readonly adminProject: string;
  readonly roles?: KeystoneRoleMap;
  /** Validations kept at most (the oldest is dropped first). */
  readonly maxCached?: number;
}

interface Cached {
  readonly principal: Principal;
  readonly until: number;
}

/** Tokens are kept by their SHA-256, never as they are. */
const cacheKey = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

const ORDER: readonly Role[] = [Role.Admin, Role.Manager, Role.Member, Role.Reader];

/**
 * Keystone's tokens (LEASEHOLD_IDENTITY=keystone): a token is validated against Keystone (`GET /v3/auth/tokens` with
 * Leasehold's service token) and the answer reused for `cacheTtlMs` at most, and never past the token's own
 * `expires_at` — so a revoked token keeps working on this replica for at most that long (30 s by default), while
 * the hot path pays no Keystone round trip per request. A project-scoped token is its project's member with the
 * highest role it carries; a system-scoped `admin`, or an `admin` of the admin project, is the operator. A project
 * gets its Leasehold row (quotas, history) the first time one of its tokens is seen.
 */
export class KeystoneIdentity implements IdentityBackend {
  readonly kind = 'keystone';
  private readonly cache = new Map<string, Cached>();
  private readonly roles: KeystoneRoleMap;

  constructor(
    private readonly deps: { readonly session: KeystoneSession; readonly store: Store; readonly clock: Clock; readonly logger: Logger },
    private readonly options: KeystoneIdentityOptions,
  ) {
    this.roles = options.roles ?? DEFAULT_KEYSTONE_ROLES;
  }

  async authenticate(token: string): Promise<Principal | null> {
    const key = cacheKey(token);
    const now = this.deps.clock.now().getTime();
    const hit = this.cache.get(key);
    if (hit && hit.until > now) return hit.principal;
    if (hit) this.cache.delete(key);

    const info = await this.validate(token);
    if (info === null || info.expiresAt.getTime() <= now) return null;
    const principal = await this.principalOf(info, key);
    this.remember(key, { principal, until: Math.min(info.expiresAt.getTime(), now + this.options.cacheTtlMs) });
    return principal;
  }

  ping(): Promise<void> {
    return this.deps.session.client.ping();
  }

  forget(token: string): void {
    this.cache.delete(cacheKey(token));
  }

  /** Asks Keystone; a service token it refuses (rotated keys, revoked) is replaced once. */
  private async validate(token: string): Promise<KeystoneTokenInfo | null> {
    const { session } = this.deps;
    const service = await session.token();
    try {
      return await session.client.validateToken(service, token);
    } catch (err) {
      if (!(err instanceof KeystoneRefusedError)) throw err;
      session.invalidate(service);
      return session.client.validateToken(await session.token(), token);
    }
  }

  private async principalOf(info: KeystoneTokenInfo, key: string): Promise<Principal> {
    const role = this.roleOf(info);
    const base = { userId: info.user.id, userName: info.user.name, tokenId: `keystone:${key.slice(0, 16)}`, source: 'keystone' as const };
    if (role === Role.Admin && (info.system || info.project?.name === this.options.adminProject)) {
      return { ...base, role: Role.Admin, projectId: null, projectName: null };
    }
    if (!info.project) {
      throw new ForbiddenError('a Keystone token must be scoped to a project (or be a system-scoped admin token)');
    }
    const row = await this.deps.store.ensureProject(info.project.id, info.project.name, this.deps.clock.now());
    // `admin` of an ordinary project manages that project; only the system or the admin project is the operator.
    return { ...base, role: role === Role.Admin ? Role.Manager : role, projectId: row.id, projectName: row.name };
  }

  private roleOf(info: KeystoneTokenInfo): Role {
    const held = new Set(info.roles.map((r) => r.toLowerCase()));
    for (const role of ORDER) {
      if (this.roles[role].some((name) => held.has(name.toLowerCase()))) return role;
    }
    throw new ForbiddenError(
      `the Keystone token carries none of the roles Leasehold knows (${ORDER.flatMap((r) => this.roles[r]).join(', ')})`,
      { details: { roles: info.roles } },
    );
  }

  private remember(key: string, entry: Cached): void {
    const max = this.options.maxCached ?? 10_000;
    if (this.cache.size >= max) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, entry);
  }
}

