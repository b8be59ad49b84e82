import { sql, type Kysely, type SqlBool } from 'kysely';
import type { ConsoleAccessState } from '../console-store.js';
import type { Database } from '../database.js';
import { GRANT_COLUMNS, toConsoleGrant } from './console-grant.js';
import { handedOver, notSubleasedAt } from './node-view-query.js';

/**
 * What the open console connections of one process need to be re-checked, for all of them in one query: each
 * token with its creator as that user is now (token → user → project), its node's owning project (resolved from
 * Ironic's raw `owner` by id or name, as node-view-query.ts does) unless the node was removed, and the lease that
 * grants access to the node at `now` (as currentLeases decides it: window, state, quarantine, handed over). One
 * query for N connections instead of N × 3 (issue 11: 200 idle consoles re-checked one by one every second took a
 * whole core on PGlite). Tokens that no longer exist are absent from the answer.
 */
export async function consoleAccessStates(
  db: Kysely<Database>,
  ids: readonly string[],
  now: Date,
): Promise<ReadonlyMap<string, ConsoleAccessState>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('console_tokens as t')
    .leftJoin('users as u', 'u.id', 't.user_id')
    .leftJoin('projects as p', 'p.id', 'u.project_id')
    .leftJoin('nodes as n', (join) => join.onRef('n.id', '=', 't.node_id').on('n.removed_at', 'is', null))
    .leftJoin('projects as by_id', (join) => join.on(sql<SqlBool>`by_id.id::text = n.owner`))
    .leftJoin('projects as by_name', (join) => join.on(sql<SqlBool>`by_name.name = n.owner`))
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('allocations as a')
          .innerJoin('leases as l', 'l.id', 'a.lease_id')
          .select(['l.id as lease_id', 'l.project_id as lease_project_id', 'l.end_at as lease_end'])
          .whereRef('a.node_id', '=', 't.node_id')
          .where('a.holds', '=', true)
          .where(sql<SqlBool>`a.period @> ${now}::timestamptz`)
          .where('l.state', 'not in', ['cancelled', 'failed'])
          .where(sql<SqlBool>`${handedOver}`)
        .where(sql<SqlBool>`${notSubleasedAt(now)}`)
          .limit(1)
          .as('cl'),
      (join) => join.onTrue(),
    )
    .select([
      ...GRANT_COLUMNS,
      'n.id as live_node_id',
      sql<string | null>`coalesce(by_id.id, by_name.id)`.as('owner_project_id'),
      'cl.lease_id',
      'cl.lease_project_id',
      'cl.lease_end',
    ])
    .where('t.id', 'in', [...ids])
    .execute();
  return new Map(
    rows.map((row) => [
      row.id,
      {
        grant: toConsoleGrant(row),
        node: row.live_node_id === null ? null : { owner_project_id: row.owner_project_id },
        lease:
          row.lease_id === null || row.lease_project_id === null || row.lease_end === null
            ? null
            : { lease_id: row.lease_id, project_id: row.lease_project_id, end: row.lease_end },
      },
    ]),
  );
}
