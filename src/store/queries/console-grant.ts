import type { Kysely } from 'kysely';
import type { Role } from '../../domain/identity.js';
import type { ConsoleGrant } from '../console-store.js';
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
    .innerJoin('users as u', 'u.id', 't.user_id')
    .leftJoin('projects as p', 'p.id', 'u.project_id')
    .select([
      't.id',
      't.node_id',
      't.user_id',
      't.created_at',
      't.expires_at',
      't.revoked_at',
      'u.name as user_name',
      'u.role',
      'p.id as project_id',
      'p.name as project_name',
    ]);
  query = 'tokenHash' in where ? query.where('t.token_hash', '=', where.tokenHash) : query.where('t.id', '=', where.id);
  const row = await query.executeTakeFirst();
  return row ? toConsoleGrant(row) : null;
}

/** The columns a grant is read from (console_tokens t, its user u and the user's project p). */
export interface ConsoleGrantRow {
  readonly id: string;
  readonly node_id: string;
  readonly user_id: string;
  readonly created_at: Date;
  readonly expires_at: Date;
  readonly revoked_at: Date | null;
  readonly user_name: string;
  readonly role: string;
  readonly project_id: string | null;
  readonly project_name: string | null;
}

/** A console token and its creator as that user is now, from one joined row (also console-access-states.ts). */
export function toConsoleGrant(row: ConsoleGrantRow): ConsoleGrant {
  return {
    token: {
      id: row.id,
      node_id: row.node_id,
      user_id: row.user_id,
      created_at: row.created_at,
      expires_at: row.expires_at,
      revoked_at: row.revoked_at,
    },
    principal: {
      userId: row.user_id,
      userName: row.user_name,
      role: row.role as Role,
      projectId: row.project_id,
      projectName: row.project_name,
      tokenId: row.id,
    },
  };
}
