import { sql, type Kysely } from 'kysely';
import type { AllocationState } from '../../domain/leasing.js';
import type { Holding } from '../../domain/reconcile.js';
import type { Database } from '../database.js';

/** Allocation states that are not finished: what reconciliation compares with Ironic. */
const UNFINISHED = ['reserved', 'starting', 'active', 'releasing'];

/**
 * Every unfinished allocation with its lease's lessee and cancellation, for reconciliation (one query; the
 * partial set of rows that matter — finished allocations, the bulk of a long history, are never read).
 */
export async function reconcileHoldings(db: Kysely<Database>): Promise<readonly Holding[]> {
  const rows = await db
    .selectFrom('allocations as a')
    .innerJoin('leases as l', 'l.id', 'a.lease_id')
    .select([
      'a.id as allocation_id',
      'a.lease_id',
      'l.project_id',
      'a.node_id',
      'a.state',
      'a.node_maintenance_at',
      'l.cancelled_at',
      'a.leave_reason',
      'a.failure_kind',
      'a.parent_allocation_id',
      sql<boolean>`exists (select 1 from nodes n where n.id = a.node_id and n.quarantined_at is not null)`.as('quarantined'),
      sql<Date>`lower(a.period)`.as('start'),
      sql<Date>`upper(a.period)`.as('end'),
    ])
    .where('a.state', 'in', UNFINISHED)
    .execute();
  return rows.map((r) => ({
    allocation_id: r.allocation_id,
    lease_id: r.lease_id,
    project_id: r.project_id,
    node_id: r.node_id,
    state: r.state as AllocationState,
    start: r.start,
    end: r.end,
    lease_cancelled: r.cancelled_at !== null,
    node_maintenance_at: r.node_maintenance_at,
    left: r.leave_reason !== null,
    failure_kind: r.failure_kind,
    node_quarantined: r.quarantined === true,
    sublease: r.parent_allocation_id !== null,
  }));
}
