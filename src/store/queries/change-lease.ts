import { sql, type Kysely, type SqlBool } from 'kysely';
import { ConflictError, NotFoundError } from '../../domain/errors.js';
import { FINISHED_LEASE_STATES, type Lease, type NewAuditEvent } from '../../domain/leasing.js';
import type { Database } from '../database.js';
import { loadLeases } from '../leasing-rows.js';
import { checkNodeQuotaLocked, lockNodes } from './create-lease.js';
import { insertEvents } from './insert-events.js';
import { forgetOtherEnds } from './lease-notices.js';
import { tstzRange } from './ranges.js';
import { cutSubleases } from './sublease-cut.js';

/** Allocations whose window may still move: not yet released, quarantined or cancelled. */
const MOVABLE = ['reserved', 'starting', 'active'];

/**
 * Moves a lease's end in one transaction: the lease, its allocations' windows and cleaning gaps (the exclusion
 * constraint refuses an extension into the next lease), the engine's pending end tasks, and the events. An
 * extension is checked against the project's node quota (`maxNodes`) under the same lock as a new lease.
 */
export async function changeLeaseEnd(
  db: Kysely<Database>,
  id: string,
  end: Date,
  cleaningGapMs: number,
  events: readonly NewAuditEvent[],
  now: Date,
  maxNodes: number | null = null,
  maxNodeHours: number | null = null,
  expectEnd: Date | null = null,
): Promise<Lease> {
  return db.transaction().execute(async (trx) => {
    const lease = await trx.selectFrom('leases').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!lease) throw new NotFoundError('lease', id);
    if ((FINISHED_LEASE_STATES as readonly string[]).includes(lease.state)) throw new ConflictError(`lease ${id} is ${lease.state}; its end can no longer change`);
    // A renewal computed from an end that moved meanwhile (another engine renewed it, the lessee changed it) is void.
    if (expectEnd !== null && lease.end_at.getTime() !== expectEnd.getTime()) {
      throw new ConflictError(`lease ${id} ends at ${lease.end_at.toISOString()} now, not ${expectEnd.toISOString()}`, { details: { end: lease.end_at.toISOString() } });
    }
    // Its notices are re-armed for the new end (issue 16).
    await forgetOtherEnds(trx, id, end);
    const nodes = await trx.selectFrom('allocations').select('node_id').where('lease_id', '=', id).where('holds', '=', true).where('leave_reason', 'is', null).execute();
    await lockNodes(trx, nodes.map((n) => n.node_id));
    if ((maxNodes !== null || maxNodeHours !== null) && end.getTime() > lease.end_at.getTime()) {
      // An extension holds the nodes longer: it may now overlap the project's other leases (issue 11).
      await checkNodeQuotaLocked(trx, lease.project_id, { max_nodes: maxNodes, max_node_hours: maxNodeHours }, { start: lease.start_at, end }, nodes.length, id);
    }
    const blockedUntil = new Date(end.getTime() + cleaningGapMs);
    const updated = await trx
      .updateTable('leases')
      .set({ end_at: end, updated_at: now, ending_soon_sent_at: null })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await trx
      .updateTable('allocations')
      .set({
        period: tstzRange(sql`lower(period)`, end),
        // A sub-lease has no cleaning gap after it (the node goes back to the lessee that lent it).
        blocked: tstzRange(sql`lower(period)`, sql`case when parent_allocation_id is null then ${blockedUntil}::timestamptz else ${end}::timestamptz end`),
        updated_at: now,
      })
      .where('lease_id', '=', id)
      .where('holds', '=', true)
      .where('state', 'in', MOVABLE)
      // A node that left the lease early (returned, replaced) keeps the end it left at.
      .where('leave_reason', 'is', null)
      .execute();
    await trx
      .updateTable('lease_tasks')
      .set({ due_at: end })
      .where('lease_id', '=', id)
      .where('kind', '=', 'end')
      .where('done_at', 'is', null)
      .where((eb) => eb('allocation_id', 'in', eb.selectFrom('allocations').select('id').where('lease_id', '=', id).where('leave_reason', 'is', null)))
      .execute();
    // One that is to leave later than the new end (an owner's reclaim with notice) leaves with the lease instead.
    const later = await trx
      .updateTable('allocations')
      .set({ period: tstzRange(sql`lower(period)`, end), blocked: tstzRange(sql`lower(period)`, blockedUntil), left_at: end, updated_at: now })
      .where('lease_id', '=', id)
      .where('leave_reason', 'is not', null)
      .where('state', 'in', MOVABLE)
      .where(sql<SqlBool>`upper(period) > ${end}::timestamptz and lower(period) < ${end}::timestamptz`)
      .returning('id')
      .execute();
    if (later.length > 0) {
      await trx
        .updateTable('lease_tasks')
        .set({ due_at: end })
        .where('allocation_id', 'in', later.map((a) => a.id))
        .where('kind', '=', 'end')
        .where('done_at', 'is', null)
        .execute();
    }
    if (end.getTime() < lease.end_at.getTime()) {
      // Shortened or ended early: what its lessee sub-leased ends at the same instant.
      const all = await trx.selectFrom('allocations').select('id').where('lease_id', '=', id).execute();
      await cutSubleases(trx, all.map((a) => a.id), end, events[0]?.actor ?? 'engine', now);
    }
    await insertEvents(trx, events, now);
    return (await loadLeases(trx, [updated]))[0]!;
  });
}

/** Cancels a lease that has not started: it stops holding its nodes, its tasks are dropped, events recorded. */
export async function cancelLease(db: Kysely<Database>, id: string, events: readonly NewAuditEvent[], now: Date): Promise<Lease> {
  return db.transaction().execute(async (trx) => {
    const lease = await trx.selectFrom('leases').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
    if (!lease) throw new NotFoundError('lease', id);
    if (lease.state !== 'pending') throw new ConflictError(`lease ${id} is ${lease.state}; only a pending lease can be cancelled`);
    const updated = await trx
      .updateTable('leases')
      .set({ state: 'cancelled', cancelled_at: now, updated_at: now })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await trx
      .updateTable('allocations')
      .set({ state: 'cancelled', holds: false, updated_at: now })
      .where('lease_id', '=', id)
      .execute();
    await trx.updateTable('lease_tasks').set({ done_at: now, locked_by: null, locked_until: null }).where('lease_id', '=', id).where('done_at', 'is', null).execute();
    // Sub-leases of a lease that never began had not begun either: cancelled with it.
    const all = await trx.selectFrom('allocations').select('id').where('lease_id', '=', id).execute();
    await cutSubleases(trx, all.map((a) => a.id), lease.start_at, events[0]?.actor ?? 'engine', now);
    await insertEvents(trx, events, now);
    return (await loadLeases(trx, [updated]))[0]!;
  });
}
