import type { Kysely } from 'kysely';
import type { Principal, Role } from '../../domain/identity.js';
import type { Database } from '../database.js';

/**
 * The caller behind a token hash: token → user → project in one query. Revoked tokens and tokens whose
 * expiry is at or before `now` (the injected clock) do not authenticate.
 */
export async function authenticate(db: Kysely<Database>, tokenHash: string, now: Date): Promise<Principal | null> {
  const row = await db
    .selectFrom('api_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .leftJoin('projects as p', 'p.id', 'u.project_id')
    .select(['t.id as token_id', 'u.id as user_id', 'u.name as user_name', 'u.role', 'p.id as project_id', 'p.name as project_name'])
    .where('t.token_hash', '=', tokenHash)
    .where('t.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('t.expires_at', 'is', null), eb('t.expires_at', '>', now)]))
    .executeTakeFirst();
  return row ? toPrincipal(row) : null;
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
