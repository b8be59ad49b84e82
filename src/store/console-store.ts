import type { Principal } from '../domain/identity.js';
import type { NewAuditEvent } from '../domain/leasing.js';

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
  readonly user_id: string;
  readonly created_at: Date;
  readonly expires_at: Date;
  readonly revoked_at: Date | null;
}

export interface NewConsoleToken {
  readonly node_id: string;
  readonly user_id: string;
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

export interface ConsoleStore {
  /** Stores the token and its audit events in one transaction. */
  create(input: NewConsoleToken, events: readonly NewAuditEvent[], now: Date): Promise<ConsoleToken>;
  get(id: string): Promise<ConsoleToken | null>;
  /**
   * The token behind a hash, with its creator as a principal — whatever its expiry or revocation (the caller
   * decides, so it can say which). Null for an unknown hash.
   */
  findByHash(tokenHash: string): Promise<ConsoleGrant | null>;
  /** The same, by id: what an open connection re-reads every second. */
  grant(id: string): Promise<ConsoleGrant | null>;
  /** Idempotent: revoking again keeps the first revocation time (and writes no second event). */
  revoke(id: string, events: readonly NewAuditEvent[], now: Date): Promise<ConsoleToken>;
}
