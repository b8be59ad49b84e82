import { sql, type Kysely, type SqlBool } from 'kysely';
import type { BookingDetail } from '../../domain/availability.js';
import type { Database } from '../database.js';
import { inList, tstzRange } from './ranges.js';

export interface AvailabilityBookingFilter {
  /** Bookings whose blocked window (lease plus cleaning gap) overlaps [from, to). */
  readonly from: Date;
  readonly to: Date | null;
  /** Only on these nodes. */
  readonly nodeIds?: readonly string[] | null;
  /** Only the leases of this project. */
  readonly projectId?: string;
}

/**
 * The allocations holding nodes whose blocked window (lease plus cleaning gap) overlaps [from, to), by node then
 * start: what planning checks for clashes (`bookings`, below) and, with names, what the timeline draws
 * (`availabilityBookings`). One query shape; served by the allocations' exclusion index (node_id, blocked) when
 * narrowed to nodes, by leases_project_idx for one project.
 */
function holding(db: Kysely<Database>, filter: AvailabilityBookingFilter) {
  let query = db
    .selectFrom('allocations as a')
    .innerJoin('leases as l', 'l.id', 'a.lease_id')
    .where('a.holds', '=', true)
    .where(sql<SqlBool>`a.blocked && ${tstzRange(filter.from, filter.to)}`);
  if (filter.nodeIds != null) query = query.where(inList('a.node_id', filter.nodeIds));
  if (filter.projectId !== undefined) query = query.where('l.project_id', '=', filter.projectId);
  return query
    .select([
      'a.node_id',
      'a.lease_id',
      'l.project_id',
      sql<Date>`lower(a.period)`.as('start'),
      sql<Date>`upper(a.period)`.as('end'),
      sql<Date>`upper(a.blocked)`.as('blocked_until'),
    ])
    .orderBy('a.node_id')
    .orderBy(sql`lower(a.period)`)
    .orderBy('a.lease_id');
}

/** Bookings for planning: node, lease, lessee and the windows. */
export function bookings(db: Kysely<Database>, filter: AvailabilityBookingFilter) {
  if (filter.nodeIds != null && filter.nodeIds.length === 0) return Promise.resolve([]);
  // A sub-lease lies inside its parent's booking: planning compares it with other sub-leases only.
  return holding(db, filter).select(sql<boolean>`a.parent_allocation_id is not null`.as('sub')).execute();
}

/** Bookings for the availability timeline: with the lease's name and state and the lessee project's name. */
export async function availabilityBookings(db: Kysely<Database>, filter: AvailabilityBookingFilter): Promise<readonly BookingDetail[]> {
  if (filter.nodeIds != null && filter.nodeIds.length === 0) return [];
  return holding(db, filter)
    .innerJoin('projects as p', 'p.id', 'l.project_id')
    .select(['l.name as lease_name', 'l.state as lease_state', 'p.name as project_name', 'a.state as allocation_state'])
    .execute();
}
