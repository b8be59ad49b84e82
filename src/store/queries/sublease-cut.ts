import { sql, type SqlBool, type Transaction } from 'kysely';
import type { NewAuditEvent } from '../../domain/leasing.js';
import { subleaseAfterCut } from '../../domain/subleasing.js';
import type { Database } from '../database.js';
import { insertEvents } from './insert-events.js';
import { tstzRange } from './ranges.js';

/** Sub-allocations still in their lease, whose window may be cut. */
const IN_LEASE = ['reserved', 'starting', 'active'];

/**
 * What cuts a parent allocation at `at` (its lease ends, is cancelled or shortened; the node is returned, replaced
 * or reclaimed) cuts what was carved from it, in the caller's transaction, at the same instant: the sub-offers end
 * at `at` (or are withdrawn, not begun by then), and every sub-lease on it runs to `at` at most. A sub-lease left
 * with no other node ends at `at` (its end moved there, its end task due then, when the engine hands the node back
 * or leaves it to the parent's cleaning), or is cancelled if it had not begun; one that keeps other nodes loses this
 * one (`leave_reason` parent_ended). `lease.sublease_ended` is written for the sub-lessee and for the parent lessee.
 * Returns the sub-leases that changed.
 */
export async function cutSubleases(trx: Transaction<Database>, parentIds: readonly string[], at: Date, actor: string, now: Date): Promise<readonly string[]> {
  if (parentIds.length === 0) return [];
  const parents = [...parentIds];
  await trx
    .updateTable('offers')
    .set({ withdrawn_at: now })
    .where('parent_allocation_id', 'in', parents)
    .where('withdrawn_at', 'is', null)
    .where(sql<SqlBool>`lower(period) >= ${at}::timestamptz`)
    .execute();
  await trx
    .updateTable('offers')
    .set({ period: tstzRange(sql`lower(period)`, at) })
    .where('parent_allocation_id', 'in', parents)
    .where('withdrawn_at', 'is', null)
    .where(sql<SqlBool>`upper(period) > ${at}::timestamptz`)
    .execute();

  const subs = await trx
    .selectFrom('allocations as a')
    .innerJoin('leases as l', 'l.id', 'a.lease_id')
    .innerJoin('allocations as p', 'p.id', 'a.parent_allocation_id')
    .innerJoin('leases as pl', 'pl.id', 'p.lease_id')
    .select(['a.id', 'a.lease_id', 'a.node_id', 'l.project_id', 'l.start_at', 'p.lease_id as parent_lease_id', 'pl.project_id as parent_project_id'])
    .select(sql<Date>`lower(a.period)`.as('start'))
    .select(sql<Date>`upper(a.period)`.as('end'))
    .where('a.parent_allocation_id', 'in', parents)
    .where('a.holds', '=', true)
    .where('a.leave_reason', 'is', null)
    .where('a.state', 'in', IN_LEASE)
    .where('l.state', 'not in', ['ended', 'cancelled', 'failed'])
    .forUpdate()
    .execute();
  const affected = subs.filter((s) => subleaseAfterCut(s, at) !== 'keep');
  const events: NewAuditEvent[] = [];
  for (const leaseId of new Set(affected.map((s) => s.lease_id))) {
    const cut = affected.filter((s) => s.lease_id === leaseId);
    const first = cut[0]!;
    const others = await trx
      .selectFrom('allocations')
      .select('id')
      .where('lease_id', '=', leaseId)
      .where('id', 'not in', cut.map((s) => s.id))
      .where('holds', '=', true)
      .where('leave_reason', 'is', null)
      .where('state', 'in', IN_LEASE)
      .where(sql<SqlBool>`upper(period) > ${at}::timestamptz`)
      .execute();
    if (others.length === 0) await endWholeLease(trx, leaseId, first.start_at, at, now);
    else for (const s of cut) await dropOne(trx, s, at, now);
    const details = { sublease_id: leaseId, parent_lease_id: first.parent_lease_id, nodes: cut.map((s) => s.node_id), at: at.toISOString() };
    const message = `the parent lease's hold on ${cut.map((s) => s.node_id).join(', ')} ended at ${at.toISOString()}: the sub-lease ends there`;
    events.push({ type: 'lease.sublease_ended', actor, lease_id: leaseId, project_id: first.project_id, node_id: first.node_id, message, details });
    events.push({ type: 'lease.sublease_ended', actor, lease_id: first.parent_lease_id, project_id: first.parent_project_id, node_id: first.node_id, message, details });
  }
  await insertEvents(trx, events, now);
  return [...new Set(affected.map((s) => s.lease_id))];
}

/** A sub-lease with nothing left past `at`: it ends there (or is cancelled, not begun), as if its lessee ended it. */
async function endWholeLease(trx: Transaction<Database>, leaseId: string, startAt: Date, at: Date, now: Date): Promise<void> {
  if (at.getTime() <= startAt.getTime()) {
    await trx.updateTable('leases').set({ state: 'cancelled', cancelled_at: now, updated_at: now }).where('id', '=', leaseId).execute();
    await trx.updateTable('allocations').set({ state: 'cancelled', holds: false, updated_at: now }).where('lease_id', '=', leaseId).execute();
    await trx.updateTable('lease_tasks').set({ done_at: now, locked_by: null, locked_until: null }).where('lease_id', '=', leaseId).where('done_at', 'is', null).execute();
    return;
  }
  await trx.updateTable('leases').set({ end_at: at, updated_at: now }).where('id', '=', leaseId).execute();
  const moved = await trx
    .updateTable('allocations')
    .set({ period: tstzRange(sql`lower(period)`, at), blocked: tstzRange(sql`lower(period)`, at), updated_at: now })
    .where('lease_id', '=', leaseId)
    .where('holds', '=', true)
    .where('state', 'in', IN_LEASE)
    .where(sql<SqlBool>`upper(period) > ${at}::timestamptz and lower(period) < ${at}::timestamptz`)
    .returning('id')
    .execute();
  if (moved.length > 0) {
    await trx.updateTable('lease_tasks').set({ due_at: at }).where('allocation_id', 'in', moved.map((m) => m.id)).where('kind', '=', 'end').where('done_at', 'is', null).execute();
  }
}

/** One node of a sub-lease that keeps others: it leaves the lease at `at` (dropped, not begun by then). */
async function dropOne(trx: Transaction<Database>, sub: { readonly id: string; readonly start: Date }, at: Date, now: Date): Promise<void> {
  if (at.getTime() <= sub.start.getTime()) {
    await trx.updateTable('allocations').set({ state: 'cancelled', holds: false, leave_reason: 'parent_ended', left_at: at, updated_at: now }).where('id', '=', sub.id).execute();
    await trx.updateTable('lease_tasks').set({ done_at: now, locked_by: null, locked_until: null }).where('allocation_id', '=', sub.id).where('done_at', 'is', null).execute();
    return;
  }
  await trx
    .updateTable('allocations')
    .set({ period: tstzRange(sql`lower(period)`, at), blocked: tstzRange(sql`lower(period)`, at), leave_reason: 'parent_ended', left_at: at, updated_at: now })
    .where('id', '=', sub.id)
    .execute();
  await trx.updateTable('lease_tasks').set({ due_at: at }).where('allocation_id', '=', sub.id).where('kind', '=', 'end').where('done_at', 'is', null).execute();
}
