import { sql, type Kysely, type Transaction } from 'kysely';
import { ConflictError, NotFoundError } from '../../domain/errors.js';
import { FINISHED_LEASE_STATES, type Lease, type NewAuditEvent } from '../../domain/leasing.js';
import type { LeaveReason } from '../../domain/replacement.js';
import type { Database } from '../database.js';
import { loadLeases } from '../leasing-rows.js';
import { lockNodes } from './create-lease.js';
import { insertEvents } from './insert-events.js';
import { tstzRange } from './ranges.js';
import { cutSubleases } from './sublease-cut.js';

/** Allocations that can still leave their lease: in it, and not already on their way out. */
const IN_LEASE = ['reserved', 'starting', 'active'];

export interface LeaveInput {
  readonly allocation_id: string;
  /** The instant it leaves (now, or later for a reclaim with notice); access to its node ends there. */
  readonly at: Date;
  readonly reason: LeaveReason;
  readonly cleaning_gap_ms: number;
}

export interface ReplaceInput extends LeaveInput {
  /** The substitute node: it holds the rest of the window from `at` (or from the lease's start, if later). */
  readonly node_id: string;
}

/**
 * An allocation leaves its lease at `at` in one transaction: its window (and the cleaning gap after it) cut there,
 * so access to its node ends at `at` and the node is free for others after the gap; its end task due at `at`, when
 * the engine takes the node back and wipes it as at any end. One that had not started by `at` just stops holding
 * its node (cancelled, its tasks dropped). With `node_id`, a substitute allocation takes the rest of the window
 * (its own start and end tasks; the exclusion constraint refuses a node that is not free: lease_conflict). Returns
 * the lease as it is now.
 */
export async function leaveLease(
  db: Kysely<Database>,
  input: LeaveInput | ReplaceInput,
  events: readonly NewAuditEvent[],
  now: Date,
): Promise<Lease> {
  return db.transaction().execute(async (trx) => {
    const current = await trx
      .selectFrom('allocations as a')
      .innerJoin('leases as l', 'l.id', 'a.lease_id')
      .select(['a.id', 'a.lease_id', 'a.node_id', 'a.group_index', 'a.state', 'a.leave_reason', 'l.state as lease_state', 'l.start_at', 'l.end_at'])
      .select(sql<Date>`lower(a.period)`.as('start'))
      .select(sql<Date>`upper(a.period)`.as('end'))
      .where('a.id', '=', input.allocation_id)
      .executeTakeFirst();
    if (!current) throw new NotFoundError('allocation', input.allocation_id);
    await trx.selectFrom('leases').select('id').where('id', '=', current.lease_id).forUpdate().execute();
    if ((FINISHED_LEASE_STATES as readonly string[]).includes(current.lease_state)) {
      throw new ConflictError(`lease ${current.lease_id} is ${current.lease_state}: its nodes no longer change`);
    }
    if (current.leave_reason !== null || !IN_LEASE.includes(current.state)) {
      throw new ConflictError(`node ${current.node_id} has already left lease ${current.lease_id} (${current.leave_reason ?? current.state})`);
    }
    const newNode = 'node_id' in input ? input.node_id : null;
    await lockNodes(trx, newNode ? [current.node_id, newNode] : [current.node_id]);
    const at = input.at.getTime() < current.start.getTime() ? current.start : input.at;
    await cut(trx, current, at, input.reason, input.cleaning_gap_ms, now);
    // The node leaves this lease at `at`: so does whoever sub-leased it (the substitute is not sub-leased).
    await cutSubleases(trx, [current.id], at, events[0]?.actor ?? 'engine', now);
    if (newNode !== null && at.getTime() < current.end.getTime()) {
      const from = at.getTime() > current.start_at.getTime() ? at : current.start_at;
      const inserted = await trx
        .insertInto('allocations')
        .values({
          lease_id: current.lease_id,
          node_id: newNode,
          group_index: current.group_index,
          state: 'reserved',
          period: tstzRange(from, current.end),
          blocked: tstzRange(from, new Date(current.end.getTime() + input.cleaning_gap_ms)),
          replaces: current.id,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await trx
        .insertInto('lease_tasks')
        .values([
          { lease_id: current.lease_id, allocation_id: inserted.id, kind: 'start', due_at: from, created_at: now },
          { lease_id: current.lease_id, allocation_id: inserted.id, kind: 'end', due_at: current.end, created_at: now },
        ])
        .execute();
    }
    await insertEvents(trx, events.map((e) => ({ ...e, lease_id: e.lease_id ?? current.lease_id })), now);
    const lease = await trx.selectFrom('leases').selectAll().where('id', '=', current.lease_id).executeTakeFirstOrThrow();
    return (await loadLeases(trx, [lease]))[0]!;
  });
}

/** The allocation's window cut at `at` — or, not started by then, no longer holding its node at all. */
async function cut(
  trx: Transaction<Database>,
  current: { readonly id: string; readonly start: Date; readonly end: Date },
  at: Date,
  reason: LeaveReason,
  gapMs: number,
  now: Date,
): Promise<void> {
  if (at.getTime() <= current.start.getTime()) {
    await trx
      .updateTable('allocations')
      .set({ state: 'cancelled', holds: false, leave_reason: reason, left_at: at, updated_at: now })
      .where('id', '=', current.id)
      .execute();
    await trx.updateTable('lease_tasks').set({ done_at: now, locked_by: null, locked_until: null }).where('allocation_id', '=', current.id).where('done_at', 'is', null).execute();
    return;
  }
  const end = at.getTime() < current.end.getTime() ? at : current.end;
  await trx
    .updateTable('allocations')
    .set({
      period: tstzRange(sql`lower(period)`, end),
      blocked: tstzRange(sql`lower(period)`, new Date(end.getTime() + gapMs)),
      leave_reason: reason,
      left_at: end,
      updated_at: now,
    })
    .where('id', '=', current.id)
    .execute();
  await trx.updateTable('lease_tasks').set({ due_at: end }).where('allocation_id', '=', current.id).where('kind', '=', 'end').where('done_at', 'is', null).execute();
}

/**
 * Records a failure of an allocation's node (or clears it with null) with its events, once per failure kind: true
 * when something changed (the caller tells the lessee), false when it was already recorded.
 */
export async function recordFailure(
  db: Kysely<Database>,
  allocationId: string,
  failure: { readonly kind: string; readonly reason: string } | null,
  events: readonly NewAuditEvent[],
  now: Date,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const changed = await trx
      .updateTable('allocations')
      .set({ failure: failure?.reason ?? null, failure_kind: failure?.kind ?? null, updated_at: now })
      .where('id', '=', allocationId)
      .where(sql<boolean>`failure_kind is distinct from ${failure?.kind ?? null}`)
      .returning('id')
      .executeTakeFirst();
    if (!changed) return false;
    await insertEvents(trx, events, now);
    return true;
  });
}
