import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import type { NodeView } from '../../domain/inventory.js';
import type { Database } from '../database.js';
import { preparedRead } from '../prepared-query.js';
import type { CurrentLease } from '../leasing-store.js';
import { toNodeView, type NodeViewRow } from '../row-mappers.js';
import { handedOver, nodeViewQuery, notSubleasedAt } from './node-view-query.js';

/**
 * A live node by id or name (an exact id wins) with the lease granting access to it at `now` — what every node
 * request decides on — in one round trip instead of two (issue 15: the gateway's sequential token, node and lease
 * lookups were +8.5 ms on an 8.8 ms Ironic GET). The lease is found as currentLeases finds it.
 */
export async function nodeWithLease(
  db: Kysely<Database>,
  idOrName: string,
  now: Date,
): Promise<{ readonly node: NodeView; readonly lease: CurrentLease | null } | null> {
  // Prepared (prepared-query.ts): every node request and the gateway under Keystone make this read; planning it
  // was most of its cost on PGlite (in-process, 50 nodes: 1.45 ms a call planned each time, 0.59 ms prepared).
  const [row] = await read(db, { idOrName, now });
  if (!row) return null;
  const { lease_id, lease_project_id, lease_end, ...node } = row;
  return { node: toNodeView(node as NodeViewRow), lease: currentLeaseOf({ lease_id, lease_project_id, lease_end }) };
}

const nodeAndLease = (db: Kysely<Database>, idOrName: string, now: Date) =>
  joinCurrentLease(nodeViewQuery(db, { kind: 'all' }), now)
    .where((eb) => eb.or([eb('n.id', '=', idOrName), eb('n.name', '=', idOrName)]))
    .orderBy(sql`n.id = ${idOrName}`, 'desc')
    .limit(1);

const read = preparedRead((db: Kysely<Database>, { idOrName, now }: { idOrName: string; now: Date }) => nodeAndLease(db, idOrName, now));

const readWithNextChange = preparedRead((db: Kysely<Database>, { idOrName, now }: { idOrName: string; now: Date }) =>
  nodeAndLease(db, idOrName, now).select(sql<number | null>`extract(epoch from ${nextHoldingBoundary(sql.ref('n.id'), now)})::float8 * 1000`.as('changes_at')),
);

/**
 * nodeWithLease with the next instant (ms; Infinity: none) at which the same rows would answer differently: a
 * holding allocation on the node starting or ending. For a cache of this read (store/read-cache.ts); null: no node.
 */
export async function nodeWithLeaseUntil(
  db: Kysely<Database>,
  idOrName: string,
  now: Date,
): Promise<{ readonly value: { readonly node: NodeView; readonly lease: CurrentLease | null }; readonly until: number } | null> {
  const [row] = await readWithNextChange(db, { idOrName, now });
  if (!row) return null;
  const { lease_id, lease_project_id, lease_end, changes_at, ...node } = row;
  const until = changes_at === null || !Number.isFinite(Number(changes_at)) ? Infinity : Number(changes_at);
  return { value: { node: toNodeView(node as NodeViewRow), lease: currentLeaseOf({ lease_id, lease_project_id, lease_end }) }, until };
}

/** Joins the lease granting access to each node at `now` (as currentLeases finds it) as `cur`, selecting its columns. */
export function joinCurrentLease(query: ReturnType<typeof nodeViewQuery>, now: Date) {
  return query
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('allocations as a')
          .innerJoin('leases as l', 'l.id', 'a.lease_id')
          .select(['l.id as lease_id', 'l.project_id as lease_project_id', 'l.end_at as lease_end'])
          .whereRef('a.node_id', '=', 'n.id')
          .where('a.holds', '=', true)
          .where(sql<SqlBool>`a.period @> ${now}::timestamptz`)
          .where('l.state', 'not in', ['cancelled', 'failed'])
          .where(sql<SqlBool>`${handedOver}`)
          .where(sql<SqlBool>`${notSubleasedAt(now)}`)
          .limit(1)
          .as('cur'),
      (join) => join.onTrue(),
    )
    .select(['cur.lease_id', 'cur.lease_project_id', 'cur.lease_end']);
}

/** The lease columns joinCurrentLease selected, as a CurrentLease (null: no lease grants access now). */
export function currentLeaseOf(row: { lease_id: string | null; lease_project_id: string | null; lease_end: Date | null }): CurrentLease | null {
  const { lease_id, lease_project_id, lease_end } = row;
  return lease_id !== null && lease_project_id !== null && lease_end !== null ? { lease_id, project_id: lease_project_id, end: lease_end } : null;
}

/**
 * The next instant after `now` at which a holding allocation on node `nodeId` starts or ends (null: none): until
 * then, with no write, the lease granting access to the node stays what it is at `now` (the lease in force, a
 * sub-lease carved from it, the next lease).
 */
export function nextHoldingBoundary(nodeId: Expression<string>, now: Date) {
  return sql<Date | null>`(select min(b) from allocations x cross join lateral (values (lower(x.period)), (upper(x.period))) as v(b)
    where x.node_id = ${nodeId} and x.holds and upper(x.period) > ${now}::timestamptz and b > ${now}::timestamptz)`;
}
