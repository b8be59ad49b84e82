import type { Kysely } from 'kysely';
import type { Principal, Role } from '../../domain/identity.js';
import type { Database } from '../database.js';

/** One token to authenticate, at the instant its request asks. */
export interface TokenAsk {
  readonly tokenHash: string;
  readonly now: Date;
}

/**
 * The callers behind token hashes in one query (token → user → project), in the order asked; null for a token
 * that is unknown, revoked, or expired at or before its own ask's `now` (the injected clock). One token is a list
 * of one (Store.authenticate).
 */
export async function authenticateMany(db: Kysely<Database>, asks: readonly TokenAsk[]): Promise<(Principal | null)[]> {
  if (asks.length === 0) return [];
  const rows = await db
    .selectFrom('api_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .leftJoin('projects as p', 'p.id', 'u.project_id')
    .select(['t.token_hash', 't.expires_at', 't.id as token_id', 'u.id as user_id', 'u.name as user_name', 'u.role', 'p.id as project_id', 'p.name as project_name'])
    .where('t.token_hash', 'in', [...new Set(asks.map((a) => a.tokenHash))])
    .where('t.revoked_at', 'is', null)
    .execute();
  const byHash = new Map(rows.map((r) => [r.token_hash, r]));
  return asks.map(({ tokenHash, now }) => {
    const row = byHash.get(tokenHash);
    if (!row || (row.expires_at !== null && row.expires_at.getTime() <= now.getTime())) return null;
    return toPrincipal(row);
  });
}

/** The caller a token row (joined to its user and project) names. */
export function toPrincipal(row: {
  readonly token_id: string;
  readonly user_id: string;
  readonly user_name: string;
  readonly role: string;
  readonly project_id: string | null;
  readonly project_name: string | null;
}): Principal {
  return {
    userId: row.user_id,
    userName: row.user_name,
    role: row.role as Role,
    projectId: row.project_id,
    projectName: row.project_name,
    tokenId: row.token_id,
  };
}
