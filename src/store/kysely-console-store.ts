import type { Kysely } from 'kysely';
import { NotFoundError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import type { NewAuditEvent } from '../domain/leasing.js';
import type { ConsoleAccessState, ConsoleGrant, ConsoleStore, ConsoleToken, NewConsoleToken } from './console-store.js';
import type { Database } from './database.js';
import { guarded as guard } from './db-errors.js';
import { consoleAccessStates } from './queries/console-access-states.js';
import { consoleGrant, toConsoleToken } from './queries/console-grant.js';
import { insertEvents } from './queries/insert-events.js';

/** Console tokens on Kysely (PGlite and PostgreSQL alike). */
export class KyselyConsoleStore implements ConsoleStore {
  constructor(private readonly db: Kysely<Database>) {}

  create(input: NewConsoleToken, events: readonly NewAuditEvent[], now: Date): Promise<ConsoleToken> {
    return guard(() =>
      this.db.transaction().execute(async (trx) => {
        if (input.user_id !== null && !isUuid(input.user_id)) throw new NotFoundError('user', input.user_id);
        const row = await trx
          .insertInto('console_tokens')
          .values({
            node_id: input.node_id,
            user_id: input.user_id,
            principal: input.user_id === null && input.principal ? JSON.stringify(input.principal) : null,
            token_hash: input.token_hash,
            created_at: now,
            expires_at: input.expires_at,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await insertEvents(trx, withConsoleId(events, row.id), now);
        return toConsoleToken(row);
      }),
    );
  }

  get(id: string): Promise<ConsoleToken | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return guard(async () => {
      const row = await this.db.selectFrom('console_tokens').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toConsoleToken(row) : null;
    });
  }

  findByHash(tokenHash: string): Promise<ConsoleGrant | null> {
    return guard(() => consoleGrant(this.db, { tokenHash }));
  }

  grant(id: string): Promise<ConsoleGrant | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return guard(() => consoleGrant(this.db, { id }));
  }

  accessStates(ids: readonly string[], now: Date): Promise<ReadonlyMap<string, ConsoleAccessState>> {
    const valid = ids.filter(isUuid);
    if (valid.length === 0) return Promise.resolve(new Map());
    return guard(() => consoleAccessStates(this.db, valid, now));
  }

  revoke(id: string, events: readonly NewAuditEvent[], now: Date): Promise<ConsoleToken> {
    if (!isUuid(id)) return Promise.reject(new NotFoundError('console', id));
    return guard(() =>
      this.db.transaction().execute(async (trx) => {
        const revoked = await trx
          .updateTable('console_tokens')
          .set({ revoked_at: now })
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .returningAll()
          .executeTakeFirst();
        if (revoked) {
          await insertEvents(trx, withConsoleId(events, id), now);
          return toConsoleToken(revoked);
        }
        // Already revoked (the first time stands) or not there at all.
        const row = await trx.selectFrom('console_tokens').selectAll().where('id', '=', id).executeTakeFirst();
        if (!row) throw new NotFoundError('console', id);
        return toConsoleToken(row);
      }),
    );
  }
}

/** Events name the token they concern (never its value: there is none to name). */
function withConsoleId(events: readonly NewAuditEvent[], id: string): NewAuditEvent[] {
  return events.map((e) => ({ ...e, details: { ...e.details, console_id: id } }));
}
