import { sql, type Kysely } from 'kysely';
import { AdvisoryLock } from '../advisory-locks.js';
import type { Database } from '../database.js';
import type { NewToken } from '../store.js';

/**
 * Creates the operator and its token iff the store has no user yet. The check and the inserts share one
 * transaction holding an advisory lock, so replicas starting together on one database create exactly one admin:
 * the second waits for the first to commit, then sees a user and does nothing.
 */
export async function bootstrapAdmin(
  db: Kysely<Database>,
  input: { readonly userName: string; readonly token: Omit<NewToken, 'user_id'> },
  now: Date,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${AdvisoryLock.BootstrapAdmin}::bigint)`.execute(trx);
    const anyUser = await trx.selectFrom('users').select('id').limit(1).executeTakeFirst();
    if (anyUser) return false;
    const user = await trx
      .insertInto('users')
      .values({ name: input.userName, project_id: null, role: 'admin', created_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('api_tokens')
      .values({
        user_id: user.id,
        token_hash: input.token.token_hash,
        prefix: input.token.prefix,
        description: input.token.description ?? '',
        created_at: now,
        expires_at: input.token.expires_at ?? null,
      })
      .execute();
    return true;
  });
}
