import { sql, type Kysely, type SqlBool } from 'kysely';
import type { HeldAllocation } from '../../domain/subleasing.js';
import type { Database } from '../database.js';

/**
 * The allocations `projectId`'s leases hold on a node that are still in their lease and not over at `now` (active or
 * to come): what a lessee may carve a sub-offer from (domain/subleasing.ts picks the one). Each says whether it is
 * itself a sub-lease (then it may not be offered on).
 */
export async function heldOnNode(db: Kysely<Database>, nodeId: string, projectId: string, now: Date): Promise<readonly HeldAllocation[]> {
  return db
    .selectFrom('allocations as a')
    .innerJoin('leases as l', 'l.id', 'a.lease_id')
    .select(['a.id', 'a.lease_id', 'a.parent_allocation_id'])
    .select(sql<Date>`lower(a.period)`.as('start'))
    .select(sql<Date>`upper(a.period)`.as('end'))
    .where('a.node_id', '=', nodeId)
    .where('l.project_id', '=', projectId)
    .where('a.holds', '=', true)
    .where('a.leave_reason', 'is', null)
    .where('a.state', 'in', ['reserved', 'starting', 'active'])
    .where('l.state', 'not in', ['ended', 'cancelled', 'failed'])
    .where(sql<SqlBool>`upper(a.period) > ${now}::timestamptz`)
    .orderBy(sql`lower(a.period)`)
    .execute();
}
