import { sql, type Kysely, type SqlBool } from 'kysely';
import type { Interval } from '../../domain/scheduling/interval.js';
import type { Database } from '../database.js';
import { tstzRange } from './ranges.js';

/**
 * The windows of the allocations `projectId` holds that overlap [from, to) — the input of the node quota
 * (domain/scheduling/quota.ts) — leaving out one lease's own (an extension is checked against the others).
 * Cancelled allocations hold nothing; a lease that ended early holds only until it ended.
 */
export async function heldWindows(
  db: Kysely<Database>,
  projectId: string,
  from: Date,
  to: Date,
  exceptLeaseId?: string,
): Promise<Interval[]> {
  const rows = await db
    .selectFrom('allocations as a')
    .innerJoin('leases as l', 'l.id', 'a.lease_id')
    .select([sql<Date>`lower(a.period)`.as('start'), sql<Date>`upper(a.period)`.as('end')])
    .where('l.project_id', '=', projectId)
    .where('a.holds', '=', true)
    .where(sql<SqlBool>`a.period && ${tstzRange(from, to)}`)
    .$if(exceptLeaseId !== undefined, (qb) => qb.where('l.id', '<>', exceptLeaseId!))
    .execute();
  return rows.map((r) => ({ start: new Date(r.start).getTime(), end: new Date(r.end).getTime() }));
}
