import { sql, type Kysely } from 'kysely';
import type { Database } from '../database.js';

/** The parent of a sub-allocation as the engine's hand-back reads it. */
export interface ParentHold {
  readonly allocation_id: string;
  readonly lease_id: string;
  readonly project_id: string;
  readonly state: string;
  readonly start: Date;
  readonly end: Date;
  /** The parent allocation is still its lease's and not on its way out (its lessee gets the node back). */
  readonly in_lease: boolean;
}

/** A sub-allocation's parent allocation with its lease, or null (not a sub-allocation, or gone). */
export async function parentHold(db: Kysely<Database>, allocationId: string): Promise<ParentHold | null> {
  const { rows } = await sql<ParentHold>`
    select p.id as allocation_id, p.lease_id, l.project_id, p.state, lower(p.period) as start, upper(p.period) as "end",
           (p.holds and p.state in ('reserved', 'starting', 'active') and l.state not in ('ended', 'cancelled', 'failed')) as in_lease
      from allocations a
      join allocations p on p.id = a.parent_allocation_id
      join leases l on l.id = p.lease_id
     where a.id = ${allocationId}::uuid`.execute(db);
  return rows[0] ?? null;
}

/** The leases sub-leasing an allocation's node (any state): a mark of one of them on the node is the parent's to clear. */
export async function subleaseIdsOf(db: Kysely<Database>, allocationId: string): Promise<readonly string[]> {
  const rows = await db.selectFrom('allocations').select('lease_id').where('parent_allocation_id', '=', allocationId).execute();
  return [...new Set(rows.map((r) => r.lease_id))];
}
