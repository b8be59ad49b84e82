import { sql, type Kysely } from 'kysely';
import { actualUse, type UsageSpan } from '../../domain/usage.js';
import type { Database } from '../database.js';
import type { UsageFilter } from '../usage-store.js';
import { tstzRange } from './ranges.js';

interface Row {
  allocation_id: string;
  node_id: string;
  node_name: string | null;
  project_id: string;
  project_name: string | null;
  owner_project_id: string | null;
  owner_name: string | null;
  resource_class: string | null;
  price_per_node_hour: string | null;
  currency: string | null;
  period_start: Date;
  period_end: Date;
  freed_before: Date | null;
  blocked_by_previous: boolean;
  dropped_at: Date | null;
}

/**
 * The allocations that may have had use in [from, to) as of `now`, each with what access waited for: the earlier
 * allocations on its node that held it (the same ones `handedOver` looks at) — the latest instant one of them let
 * the node go, and whether one still holds it back. An allocation that stopped holding its node (cancelled before
 * its start) never served; one the engine dropped while holding it served until it was dropped.
 */
export async function usageSpans(db: Kysely<Database>, filter: UsageFilter, now: Date): Promise<UsageSpan[]> {
  const to = filter.to.getTime() < now.getTime() ? filter.to : now;
  if (to.getTime() <= filter.from.getTime()) return [];
  const { rows } = await sql<Row>`
    select a.id as allocation_id, u.node_id, u.node_name, u.lessee_project_id as project_id, lp.name as project_name,
           u.owner_project_id, op.name as owner_name, u.resource_class, u.price_per_node_hour::text as price_per_node_hour,
           u.currency, lower(a.period) as period_start, upper(a.period) as period_end,
           g.freed_before, coalesce(g.blocked, false) as blocked_by_previous,
           case when a.state = 'cancelled' then coalesce(a.freed_at, a.updated_at) end as dropped_at
      from allocations a
      join usage_records u on u.allocation_id = a.id
      left join projects lp on lp.id = u.lessee_project_id
      left join projects op on op.id = u.owner_project_id
      left join lateral (
        select max(prev.freed_at) as freed_before, bool_or(prev.freed_at is null) as blocked
          from allocations prev
         where prev.node_id = a.node_id and prev.holds and lower(prev.period) < lower(a.period)
           -- A sub-lease's parent holds the node all along: it is not a previous holder (as in handedOver).
           and prev.id is distinct from a.parent_allocation_id
      ) g on true
     where a.holds
       and a.period && ${tstzRange(filter.from, to)}
       ${filter.lessee_project_id !== undefined ? sql`and u.lessee_project_id = ${filter.lessee_project_id}` : sql``}
       ${filter.owner_project_id !== undefined ? sql`and u.owner_project_id = ${filter.owner_project_id}` : sql``}
     order by lower(a.period), a.id`.execute(db);
  const spans: UsageSpan[] = [];
  for (const r of rows) {
    const use = actualUse(
      {
        period_start: new Date(r.period_start).getTime(),
        period_end: new Date(r.period_end).getTime(),
        freed_before: r.freed_before === null ? null : new Date(r.freed_before).getTime(),
        blocked_by_previous: r.blocked_by_previous,
        dropped_at: r.dropped_at === null ? null : new Date(r.dropped_at).getTime(),
      },
      now.getTime(),
    );
    if (use === null) continue;
    const { period_start: _s, period_end: _e, freed_before: _f, blocked_by_previous: _b, dropped_at: _d, ...rest } = r;
    spans.push({ ...rest, start: use.start, end: use.end });
  }
  return spans;
}
