import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../database.js';

/** The parent of a sub-booking on one node: the allocation it is carved from, its lease and that lease's lessee. */
export interface SubleaseParent {
  readonly node_id: string;
  readonly parent_allocation_id: string;
  readonly parent_lease_id: string;
  readonly parent_project_id: string;
}

/**
 * Which of `nodeIds` a booking of [start, end) by `projectId` takes as a sub-lease: those a sub-offer in force
 * allowing the project covers, whose parent allocation still holds the node over the whole window. The booking's
 * allocation on such a node points to that parent (and competes with other sub-leases only, migration 0012).
 */
export async function subleaseParents(
  db: Kysely<Database> | Transaction<Database>,
  nodeIds: readonly string[],
  projectId: string,
  start: Date,
  end: Date,
): Promise<ReadonlyMap<string, SubleaseParent>> {
  if (nodeIds.length === 0) return new Map();
  const { rows } = await sql<SubleaseParent>`
    select o.node_id, o.parent_allocation_id, pa.lease_id as parent_lease_id, pl.project_id as parent_project_id
      from offers o
      join allocations pa on pa.id = o.parent_allocation_id
      join leases pl on pl.id = pa.lease_id
     where o.node_id = any(${[...nodeIds]}::text[])
       and o.parent_allocation_id is not null and o.withdrawn_at is null
       and o.period @> tstzrange(${start}::timestamptz, ${end}::timestamptz, '[)')
       and (o.allowed_projects is null or ${projectId}::text = any(o.allowed_projects::text[]))
       and pa.holds and pa.leave_reason is null
       and pa.period @> tstzrange(${start}::timestamptz, ${end}::timestamptz, '[)')`.execute(db);
  return new Map(rows.map((r) => [r.node_id, r]));
}
