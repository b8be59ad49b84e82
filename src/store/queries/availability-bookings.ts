import { sql, type Kysely, type SqlBool } from 'kysely';
import type { BookingDetail } from '../../domain/availability.js';
import type { Database } from '../database.js';

export interface AvailabilityBookingFilter {
  /** Bookings whose blocked window (lease plus cleaning gap) overlaps [from, to). */
  readonly from: Date;
  readonly to: Date;
  /** Only on these nodes. */
  readonly nodeIds?: readonly string[];
  /** Only the leases of this project. */
  readonly projectId?: string;
}

/**
 * The allocations holding nodes in a window, with their lease's name and state and the lessee project's name, for
 * the availability timeline (one query; the caller decides what each viewer may see of them). Served by the
 * allocations' exclusion index (node_id, blocked) when narrowed to nodes, by leases_project_idx for one project.
 */
export async function availabilityBookings(db: Kysely<Database>, filter: AvailabilityBookingFilter): Promise<readonly BookingDetail[]> {
  if (filter.nodeIds !== undefined && filter.nodeIds.length === 0) return [];
  let query = db
    .selectFrom('allocations as a')
    .innerJoin('leases as l', 'l.id', 'a.lease_id')
    .innerJoin('projects as p', 'p.id', 'l.project_id')
    .select([
      'a.node_id',
      'a.lease_id',
      'l.name as lease_name',
      'l.state as lease_state',
      'l.project_id',
      'p.name as project_name',
      'a.state as allocation_state',
      sql<Date>`lower(a.period)`.as('start'),
      sql<Date>`upper(a.period)`.as('end'),
      sql<Date>`upper(a.blocked)`.as('blocked_until'),
    ])
    .where('a.holds', '=', true)
    .where(sql<SqlBool>`a.blocked && tstzrange(${filter.from}::timestamptz, ${filter.to}::timestamptz, '[)')`);
  if (filter.nodeIds !== undefined) query = query.where('a.node_id', 'in', filter.nodeIds);
  if (filter.projectId !== undefined) query = query.where('l.project_id', '=', filter.projectId);
  return query.orderBy('a.node_id').orderBy(sql`lower(a.period)`).orderBy('a.lease_id').execute();
}
