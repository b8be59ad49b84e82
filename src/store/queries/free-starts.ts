import { sql, type Kysely } from 'kysely';
import type { Database } from '../database.js';
import type { FreeStarts } from '../leasing-store.js';

interface Row {
  node_id: string;
  lo: Date;
  hi: Date;
}

/**
 * For each node, the instants in [from, to] at which a window of `spanMs` (a lease plus the cleaning gap after it)
 * could start without meeting a held window: the gaps between consecutive holds (window functions over the
 * allocations' exclusion index), shortened by the span — so the earliest-start search reads a few intervals per
 * node instead of every booking of a year. Inclusive bounds: a start at `hi` ends exactly where the next hold
 * begins. A node with nothing held is free over all of [from, to].
 */
export async function freeStarts(
  db: Kysely<Database>,
  nodeIds: readonly string[],
  from: Date,
  to: Date,
  spanMs: number,
): Promise<readonly FreeStarts[]> {
  if (nodeIds.length === 0) return [];
  const span = sql`(${spanMs}::float8 * interval '1 millisecond')`;
  const { rows } = await sql<Row>`
    with h as (
      select a.node_id, lower(a.blocked) as s, upper(a.blocked) as e
        from allocations a
       where a.holds and a.node_id = any(${[...nodeIds]}::text[])
         and a.blocked && tstzrange(${from}::timestamptz, ${to}::timestamptz + ${span}, '[)')
    ), gaps as (
      select node_id, lag(e) over (partition by node_id order by s) as lo, s - ${span} as hi from h
      union all
      select n.node_id, m.e as lo, null as hi
        from unnest(${[...nodeIds]}::text[]) as n(node_id)
        left join (select node_id, max(e) as e from h group by node_id) m on m.node_id = n.node_id
    )
    select node_id, greatest(coalesce(lo, ${from}::timestamptz), ${from}::timestamptz) as lo,
           least(coalesce(hi, ${to}::timestamptz), ${to}::timestamptz) as hi
      from gaps
     where greatest(coalesce(lo, ${from}::timestamptz), ${from}::timestamptz) <= least(coalesce(hi, ${to}::timestamptz), ${to}::timestamptz)
     order by node_id, lo`.execute(db);
  const byNode = new Map<string, { start: number; end: number }[]>(nodeIds.map((id) => [id, []]));
  for (const r of rows) byNode.get(r.node_id)?.push({ start: new Date(r.lo).getTime(), end: new Date(r.hi).getTime() });
  return [...byNode].map(([node_id, starts]) => ({ node_id, starts }));
}
