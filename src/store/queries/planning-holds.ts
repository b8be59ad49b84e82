import { sql, type Kysely } from 'kysely';
import type { Database } from '../database.js';
import type { Hold } from '../leasing-store.js';

/**
 * Up to this many nodes each is looked up alone (a nested loop over the index); past it one scan of the table is
 * cheaper. Measured on PGlite at 10,000 nodes / 100,000 leases: 384 nodes 7 ms as lookups against 30 ms as the
 * hash join over a scan of every allocation the planner chose on its own (it costs an index probe as a disk read);
 * the scan is ≈ 26 ms whatever the list, the lookups ≈ 0.02 ms a node.
 */
const LOOKUPS_UP_TO = 1_000;

/**
 * The windows held on some nodes overlapping [from, to): what planning checks a few best candidates against.
 * Allocations alone (no join to leases: planning needs no project) and the node list as one array parameter
 * (an `IN` list of thousands of parameters cost more to send and plan than the rows it found). A short list is
 * looked up node by node: `offset 0` keeps the lateral subquery from being flattened into the join the planner
 * would otherwise pick (a scan of every allocation: the 384-node widening of a seed create took 30 ms, a third of
 * the create).
 */
export async function planningHolds(db: Kysely<Database>, nodeIds: readonly string[], from: Date, to: Date | null): Promise<readonly Hold[]> {
  if (nodeIds.length === 0) return [];
  const window = sql`tstzrange(${from}::timestamptz, ${to}::timestamptz, '[)')`;
  const { rows } =
    nodeIds.length <= LOOKUPS_UP_TO
      ? await sql<Hold>`
    select a.node_id, a.lease_id, lower(a.period) as start, upper(a.blocked) as blocked_until,
           a.parent_allocation_id is not null as sub
      from unnest(${[...nodeIds]}::text[]) as n(id)
     cross join lateral (select a.node_id, a.lease_id, a.period, a.blocked, a.parent_allocation_id from allocations a where a.node_id = n.id and a.holds and a.blocked && ${window} offset 0) a
     order by a.node_id, lower(a.period)`.execute(db)
      : await sql<Hold>`
    select a.node_id, a.lease_id, lower(a.period) as start, upper(a.blocked) as blocked_until,
           a.parent_allocation_id is not null as sub
      from unnest(${[...nodeIds]}::text[]) as n(id)
      join allocations a on a.node_id = n.id
     where a.holds and a.blocked && ${window}
     order by a.node_id, lower(a.period)`.execute(db);
  return rows;
}
