import type { Principal, PrincipalSnapshot } from '../domain/identity.js';
import type { NewAuditEvent } from '../domain/leasing.js';
import type { CurrentLease } from './leasing-store.js';

/**
 * Serial console tokens: short-lived, for one node, stored as a SHA-256 hash (the value is shown once). A token
 * carries its creator's rights, which are read again (role, project) every time it is checked, so a token never
 * grants more than its creator has at that moment; the lease table decides the rest (src/console/).
 *
 * Errors: NotFoundError('node'|'user', id) when the referenced node or user is missing; NotFoundError('console', id)
 * when revoking a token that does not exist.
 */
export interface ConsoleToken {
  readonly id: string;
  readonly node_id: string;
  /** The local user it was issued to; null for a Keystone user's (see the grant's principal). */
  readonly user_id: string | null;
  /** Whoever it was issued to: the local user's id, or the Keystone user's. */
  readonly issued_to: string;
  readonly created_at: Date;
  readonly expires_at: Date;
  readonly revoked_at: Date | null;
}

export interface NewConsoleToken {
  readonly node_id: string;
  /** A local user's token: its rights are read again from `users` at every check. */
  readonly user_id: string | null;
  /** A Keystone user's token (user_id null): the identity it was issued to, kept for its checks. */
  readonly principal?: PrincipalSnapshot;
  /** SHA-256 of the token value, hex. The value itself is never stored. */
  readonly token_hash: string;
  readonly expires_at: Date;
}

/** A token with the caller it stands for, as that user is now (its current role and project). */
export interface ConsoleGrant {
  readonly token: ConsoleToken;
  /** `tokenId` is the console token's id. */
  readonly principal: Principal;
}

/** What re-checking an open console connection needs: the token and its user now, the node, its current lease. */
export interface ConsoleAccessState {
  readonly grant: ConsoleGrant;
  /** The token's node with its owning project resolved (null when none resolves); null when the node was removed. */
  readonly node: { readonly owner_project_id: string | null } | null;
  /** The lease granting access to the node at `now`, whoever holds it (LeasingStore.currentLeases' rule), or null. */
  readonly lease: CurrentLease | null;
}

export interface ConsoleStore {
  /** Stores the token and its audit events in one transaction. */
  create(input: NewConsoleToken, events: readonly NewAuditEvent[], now: Date): Promise<ConsoleToken>;
  get(id: string): Promise<ConsoleToken | null>;
  /**
   * The token behind a hash, with its creator as a principal — whatever its expiry or revocation (the caller
   * decides, so it can say which). Null for an unknown hash.
   */
  findByHash(tokenHash: string): Promise<ConsoleGrant | null>;
  /** The same, by id. */
  grant(id: string): Promise<ConsoleGrant | null>;
  /**
   * For each of these tokens (those of a process's open connections), what re-checking its access needs at `now`,
   * in one query whatever their number. Unknown ids are absent from the answer.
   */
  accessStates(ids: readonly string[], now: Date): Promise<ReadonlyMap<string, ConsoleAccessState>>;
  /** Idempotent: revoking again keeps the first revocation time (and writes no second event). */
  revoke(id: string, events: readonly NewAuditEvent[], now: Date): Promise<ConsoleToken>;
}
