import { sql, type Kysely } from 'kysely';
import { ConflictError, NotFoundError } from '../../domain/errors.js';
import { FINISHED_LEASE_STATES, type Lease, type NewAuditEvent } from '../../domain/leasing.js';
import type { Database } from '../database.js';
import { loadLeases } from '../leasing-rows.js';
import { insertEvents } from './insert-events.js';

/**
 * A lease's auto-renew (issue 16, item 4): set or cleared by the lessee, found due by the engine, and ended (`done`,
 * `stopped`) once. The renewal itself is a change of the end (change-lease.ts, with the end it was computed from).
 */

/** Sets (or with null clears) the lease's auto-renew: `on` again, whatever stopped it before. */
export async function setAutoRenew(
  db: Kysely<Database>,
  leaseId: string,
  renew: { readonly step_ms: number; readonly until: Date } | null,
  events: readonly NewAuditEvent[],
  now: Date,
): Promise<Lease> {
  return db.transaction().execute(async (trx) => {
    const lease = await trx.selectFrom('leases').select(['id', 'state']).where('id', '=', leaseId).forUpdate().executeTakeFirst();
    if (!lease) throw new NotFoundError('lease', leaseId);
    if ((FINISHED_LEASE_STATES as readonly string[]).includes(lease.state) || lease.state === 'ending') {
      throw new ConflictError(`lease ${leaseId} is ${lease.state}; it can no longer be renewed`);
    }
    const row = await trx
      .updateTable('leases')
      .set({
        auto_renew_step_ms: renew?.step_ms ?? null,
        auto_renew_until: renew?.until ?? null,
        auto_renew_state: renew ? 'on' : null,
        auto_renew_rule: null,
        auto_renew_message: null,
        updated_at: now,
      })
      .where('id', '=', leaseId)
      .returningAll()
      .executeTakeFirstOrThrow();
    await insertEvents(trx, events, now);
    return (await loadLeases(trx, [row]))[0]!;
  });
}

/**
 * Leases whose auto-renew is on and that have at most one step left at `now` (domain/auto-renew.ts: a renewal is
 * tried a step ahead of the end), soonest end first.
 */
export async function dueRenewals(db: Kysely<Database>, now: Date, limit: number): Promise<readonly string[]> {
  const rows = await db
    .selectFrom('leases')
    .select('id')
    .where('auto_renew_state', '=', 'on')
    .where('state', 'in', ['pending', 'active'])
    .where('start_at', '<=', now)
    .where('end_at', '>', now)
    .where(sql<boolean>`end_at - auto_renew_step_ms * interval '1 millisecond' <= ${now}::timestamptz`)
    .orderBy('end_at')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Ends the lease's auto-renew (`done`: its limit is reached; `stopped`: a rule refused a step) with its events,
 * only while it is still on and the lease still ends at `end`: told once, even with two engines. Resolves to
 * whether this call ended it.
 */
export async function finishAutoRenew(
  db: Kysely<Database>,
  leaseId: string,
  end: Date,
  outcome: { readonly state: 'done' | 'stopped'; readonly rule: string | null; readonly message: string | null },
  events: readonly NewAuditEvent[],
  now: Date,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const changed = await trx
      .updateTable('leases')
      .set({ auto_renew_state: outcome.state, auto_renew_rule: outcome.rule, auto_renew_message: outcome.message, updated_at: now })
      .where('id', '=', leaseId)
      .where('auto_renew_state', '=', 'on')
      .where('end_at', '=', end)
      .returning('id')
      .executeTakeFirst();
    if (!changed) return false;
    await insertEvents(trx, events, now);
    return true;
  });
}
