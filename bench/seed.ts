import type { BenchSql } from './databases.js';
import { RACE_TRAIT } from './inventory.js';

const HOUR_MS = 3_600_000;
/** Every node carries one booking per slot of 6 days; a booking lasts 12 to 71 hours (plus the cleaning gap). */
export const SLOT_HOURS = 144;
/** The owners' offers allow leases of at most 5 days (the seed workflow's policy). */
export const MAX_LEASE_MS = 5 * 24 * HOUR_MS;

export interface SeedCounts {
  readonly offers: number;
  readonly leases: number;
  readonly ended: number;
  readonly active: number;
  readonly pending: number;
  readonly tasks: number;
  readonly events: number;
  /** The bookings span [from, to). */
  readonly from: Date;
  readonly to: Date;
}

const ts = (d: Date) => `'${d.toISOString()}'::timestamptz`;

/**
 * Seeds what a busy pool has, in bulk SQL (matching migrations/0002_leasing.sql), after the inventory sync:
 * - one open-ended offer per node by its owner project (max lease 5 days, every project allowed);
 * - `leases` one-node leases by the `lessee-*` projects, spread over the nodes round-robin (race nodes left
 *   free), each node's bookings one per 6-day slot at a per-node offset, half in the past and half in the
 *   future: past ones `ended` with `released` allocations, current ones `active`, future ones `pending` with
 *   `reserved` allocations; every allocation holds (holds = true) with period and blocked (period plus the
 *   cleaning gap) as the API writes them, so the exclusion constraint checks every row;
 * - a start and an end task per allocation (done when due in the past), and a `lease.created` event per lease.
 * Finishes with ANALYZE, as autovacuum would on a live database.
 */
export async function seedBookings(sql: BenchSql, input: { leases: number; now: Date; gapMs: number }): Promise<SeedCounts> {
  const [{ n: nodeCount } = { n: 0 }] = await sql.query<{ n: number }>(
    `select count(*)::int as n from nodes where removed_at is null and not (traits @> $1::jsonb)`,
    [JSON.stringify([RACE_TRAIT])],
  );
  if (nodeCount === 0) throw new Error('seed: no nodes to book');
  const slots = Math.ceil(input.leases / nodeCount);
  const from = new Date(input.now.getTime() - Math.floor(slots / 2) * SLOT_HOURS * HOUR_MS);
  const to = new Date(from.getTime() + (slots + 1) * SLOT_HOURS * HOUR_MS);
  const now = ts(input.now);
  const gap = `${input.gapMs} * interval '1 millisecond'`;
  await sql.exec(`
    insert into offers (node_id, project_id, period, max_lease_ms, created_at)
    select n.id, p.id, tstzrange(${ts(new Date(from.getTime() - 30 * 24 * HOUR_MS))}, null, '[)'), ${MAX_LEASE_MS}, ${now}
    from nodes n join projects p on p.name = n.owner
    where n.removed_at is null;

    drop table if exists bench_seed_nodes;
    drop table if exists bench_seed_leases;
    create temp table bench_seed_nodes as
      select id as node_id, (row_number() over (order by id) - 1)::int as idx
      from nodes where removed_at is null and not (traits @> '["${RACE_TRAIT}"]'::jsonb);
    create unique index on bench_seed_nodes (idx);

    create temp table bench_seed_leases as
    with lessees as (select array_agg(id order by name) as ids from projects where name like 'lessee-%')
    select i,
           md5('bench-lease-' || i)::uuid as id,
           n.node_id,
           l.ids[1 + i % array_length(l.ids, 1)] as project_id,
           t.start_at,
           t.start_at + (12 + (i * 31) % 60) * interval '1 hour' as end_at
    from generate_series(0, ${input.leases - 1}) as i
    join bench_seed_nodes n on n.idx = i % ${nodeCount}
    cross join lessees l
    cross join lateral (
      select ${ts(from)} + ((i / ${nodeCount}) * ${SLOT_HOURS} + (n.idx * 7919) % ${SLOT_HOURS}) * interval '1 hour' as start_at
    ) t;

    insert into leases (id, name, project_id, start_at, end_at, state, request, created_at, updated_at)
    select id, 'seed-' || i, project_id, start_at, end_at,
           case when end_at <= ${now} then 'ended' when start_at > ${now} then 'pending' else 'active' end,
           jsonb_build_object('nodes', jsonb_build_array(node_id)),
           least(start_at - interval '1 day', ${now}), least(end_at, ${now})
    from bench_seed_leases;

    insert into allocations (lease_id, node_id, group_index, state, period, blocked, holds, updated_at)
    select id, node_id, 0,
           case when end_at <= ${now} then 'released' when start_at > ${now} then 'reserved' else 'active' end,
           tstzrange(start_at, end_at, '[)'), tstzrange(start_at, end_at + ${gap}, '[)'), true, least(end_at, ${now})
    from bench_seed_leases;

    insert into lease_tasks (lease_id, allocation_id, kind, due_at, done_at, created_at)
    select a.lease_id, a.id, k.kind, k.due, case when k.due <= ${now} then k.due end, least(lower(a.period) - interval '1 day', ${now})
    from allocations a
    join bench_seed_leases s on s.id = a.lease_id
    cross join lateral (values ('start', lower(a.period)), ('end', upper(a.period))) as k(kind, due);

    insert into events (at, type, actor, lease_id, project_id, message, details)
    select least(start_at - interval '1 day', ${now}), 'lease.created', 'seed', id, project_id, '1 nodes', '{}'::jsonb
    from bench_seed_leases;

    drop table bench_seed_leases;
    drop table bench_seed_nodes;
    analyze;
  `);
  const [row] = await sql.query<Record<string, number>>(`
    select (select count(*)::int from offers) as offers,
           (select count(*)::int from leases) as leases,
           (select count(*)::int from leases where state = 'ended') as ended,
           (select count(*)::int from leases where state = 'active') as active,
           (select count(*)::int from leases where state = 'pending') as pending,
           (select count(*)::int from lease_tasks) as tasks,
           (select count(*)::int from events) as events`);
  return {
    offers: row!.offers!,
    leases: row!.leases!,
    ended: row!.ended!,
    active: row!.active!,
    pending: row!.pending!,
    tasks: row!.tasks!,
    events: row!.events!,
    from,
    to,
  };
}

/** Pairs of holding allocations on one node whose blocked ranges overlap (the invariant says: none). */
export async function countOverlaps(sql: BenchSql): Promise<number> {
  const [row] = await sql.query<{ n: number }>(
    `select count(*)::int as n from allocations a join allocations b
       on a.node_id = b.node_id and a.id < b.id and a.holds and b.holds and a.blocked && b.blocked`,
  );
  return row!.n;
}
