import type { Kysely } from 'kysely';
import type { PrincipalSnapshot, Role } from '../../domain/identity.js';
import type { ConsoleGrant, ConsoleToken } from '../console-store.js';
import type { Database } from '../database.js';

/**
 * A console token with its creator as that user is now (token → user → project in one query). Expiry and
 * revocation are returned, not filtered, so the console can tell the client which one refused it.
 */
export async function consoleGrant(
  db: Kysely<Database>,
  where: { readonly tokenHash: string } | { readonly id: string },
): Promise<ConsoleGrant | null> {
  let query = db
    .selectFrom('console_tokens as t')
    .leftJoin('users as u', 'u.id', 't.user_id')
    .leftJoin('projects as p', 'p.id', 'u.project_id')
    .select(GRANT_COLUMNS);
  query = 'tokenHash' in where ? query.where('t.token_hash', '=', where.tokenHash) : query.where('t.id', '=', where.id);
  const row = await query.executeTakeFirst();
  return row ? toConsoleGrant(row) : null;
}

/** The columns a grant is read from: console_tokens t, its local user u (left joined) and the user's project p. */
export const GRANT_COLUMNS = [
  't.id',
  't.node_id',
  't.user_id',
  't.created_at',
  't.expires_at',
  't.revoked_at',
  't.principal',
  'u.name as user_name',
  'u.role',
  'p.id as project_id',
  'p.name as project_name',
] as const;

export interface ConsoleGrantRow {
  readonly id: string;
  readonly node_id: string;
  readonly user_id: string | null;
  readonly created_at: Date;
  readonly expires_at: Date;
  readonly revoked_at: Date | null;
  readonly principal: Record<string, unknown> | null;
  readonly user_name: string | null;
  readonly role: string | null;
  readonly project_id: string | null;
  readonly project_name: string | null;
}

/** A console token as stored: issued to a local user (its id) or to a Keystone user (the snapshot's user id). */
export function toConsoleToken(
  row: Pick<ConsoleGrantRow, 'id' | 'node_id' | 'user_id' | 'created_at' | 'expires_at' | 'revoked_at' | 'principal'>,
): ConsoleToken {
  return {
    id: row.id,
    node_id: row.node_id,
    user_id: row.user_id,
    issued_to: row.user_id ?? String(row.principal?.userId ?? ''),
    created_at: row.created_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
  };
}

/**
 * A console token and the principal it stands for, from one joined row (also console-access-states.ts): a local
 * user as it is now (role and project read again), a Keystone user as the token was issued to it.
 */
export function toConsoleGrant(row: ConsoleGrantRow): ConsoleGrant {
  const token = toConsoleToken(row);
  if (row.user_id === null) {
    const who = (row.principal ?? {}) as Partial<PrincipalSnapshot>;
    return {
      token,
      principal: {
        userId: String(who.userId ?? ''),
        userName: String(who.userName ?? ''),
        role: (who.role ?? 'reader') as Role,
        projectId: who.projectId ?? null,
        projectName: who.projectName ?? null,
        tokenId: row.id,
        source: 'keystone',
      },
    };
  }
  return {
    token,
    principal: {
      userId: row.user_id,
      userName: row.user_name ?? '',
      role: row.role as Role,
      projectId: row.project_id,
      projectName: row.project_name,
      tokenId: row.id,
    },
  };
}
