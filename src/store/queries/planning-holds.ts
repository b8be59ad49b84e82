import { sql, type Kysely } from 'kysely';
import type { Database } from '../database.js';
import type { Hold } from '../leasing-store.js';
import { instant } from '../folded-rows.js';

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
export async function planningHolds(db: Kysely<Database>, nodeIds: readonly string[], from: Date, to: Date | null, fold = false): Promise<readonly Hold[]> {
  if (nodeIds.length === 0) return [];
  const window = sql`tstzrange(${from}::timestamptz, ${to}::timestamptz, '[)')`;
  const rows =
    nodeIds.length <= LOOKUPS_UP_TO
      ? sql`
      from unnest(${[...nodeIds]}::text[]) as n(id)
     cross join lateral (select a.node_id, a.lease_id, a.period, a.blocked, a.parent_allocation_id from allocations a where a.node_id = n.id and a.holds and a.blocked && ${window} offset 0) a`
      : sql`
      from unnest(${[...nodeIds]}::text[]) as n(id)
      join allocations a on a.node_id = n.id
     where a.holds and a.blocked && ${window}`;
  if (!fold) {
    return (await sql<Hold>`
    select a.node_id, a.lease_id, lower(a.period) as start, upper(a.blocked) as blocked_until, a.parent_allocation_id is not null as sub
    ${rows}
     order by a.node_id, lower(a.period)`.execute(db)).rows;
  }
  // Folded into one JSON text by the database (`fold`: PGlite): its result parser slices and decodes every field of
  // every row (a page of 1,000 offers holds ≈ 1,500 windows: 7,500 fields), where one text is one JSON.parse.
  // Measured at 10,000 nodes, the whole offer list: 630 → 545 ms on PGlite; on PostgreSQL (node-postgres) no
  // better, so not folded there (issue 15).
  const { rows: [folded] } = await sql<{ holds: string | null }>`
    select json_agg(json_build_array(a.node_id, a.lease_id, lower(a.period), upper(a.blocked), a.parent_allocation_id is not null)
                    order by a.node_id, lower(a.period))::text as holds
    ${rows}`.execute(db);
  if (!folded?.holds) return [];
  return (JSON.parse(folded.holds) as [string, string, string, string, boolean][]).map(([node_id, lease_id, start, blocked_until, sub]) => ({
    node_id,
    lease_id,
    start: instant(start),
    blocked_until: instant(blocked_until),
    sub,
  }));
}
