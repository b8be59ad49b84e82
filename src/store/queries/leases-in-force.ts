import { sql, type Kysely } from 'kysely';
import type { Database } from '../database.js';
import type { LeaseInForce, LeaseInForceChanges } from '../store.js';
import { nextHoldingBoundary } from './node-with-lease.js';
import { grantsAccessAt } from './node-view-query.js';

interface InForceRow {
  node_id: string;
  lease_id: string | null;
  project_id: string | null;
  end_at: Date | string | null;
  lessee_name: string | null;
  until: number | string | null;
}

/**
 * The lease granting access to each of `nodeIds` at `now` (as currentLeases decides), with its project's name and
 * the next instant the answer could change without a write (a holding allocation on the node starting or ending).
 * Ids are passed as one array, not one parameter each: a page of 1,000 ids as parameters took PGlite longer to
 * bind than to run.
 */
export async function leasesInForce(db: Kysely<Database>, nodeIds: readonly string[], now: Date): Promise<readonly LeaseInForce[]> {
  if (nodeIds.length === 0) return [];
  const { rows } = await sql<InForceRow>`
    select n.id as node_id, cur.lease_id, cur.project_id, cur.end_at, p.name as lessee_name,
           extract(epoch from ${nextHoldingBoundary(sql.ref('n.id'), now)})::float8 * 1000 as until
      from unnest(${[...new Set(nodeIds)]}::text[]) as n(id)
      left join lateral (
        select l.id as lease_id, l.project_id, l.end_at from allocations a join leases l on l.id = a.lease_id
         where a.node_id = n.id and ${grantsAccessAt(now)}
         limit 1) cur on true
      left join projects p on p.id = cur.project_id`.execute(db);
  return rows.map((r) => ({
    node_id: r.node_id,
    lease: r.lease_id !== null && r.project_id !== null && r.end_at !== null ? { lease_id: r.lease_id, project_id: r.project_id, end: new Date(r.end_at) } : null,
    lessee_name: r.lease_id === null ? null : r.lessee_name,
    until: r.until === null || !Number.isFinite(Number(r.until)) ? Infinity : Number(r.until),
  }));
}

interface ChangeRow {
  watermark: string;
  kind: 'node' | 'project' | null;
  id: string | null;
}

/**
 * The nodes whose lease in force may have changed since `since` (a watermark this query returned before; null: only
 * the watermark, everything counts as changed) and the projects renamed since, by the stamps of migration 0017
 * (and 0009's on nodes: a quarantine), and the new watermark. One statement, so the watermark and the changes are
 * one snapshot; it returns the watermark row alone when nothing changed.
 */
export async function leaseInForceChanges(db: Kysely<Database>, since: string | null): Promise<LeaseInForceChanges> {
  if (since === null) {
    const { rows } = await sql<{ watermark: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as watermark`.execute(db);
    return { watermark: rows[0]!.watermark, full: true, nodeIds: [], projectIds: [] };
  }
  const { rows } = await sql<ChangeRow>`
    select w.xmin::text as watermark, c.kind, c.id
      from (select pg_snapshot_xmin(pg_current_snapshot()) as xmin) w
      left join lateral (
        select 'node' as kind, a.node_id as id from allocations a where a.changed_xid >= ${since}::xid8
        union select 'node', a.node_id from leases l join allocations a on a.lease_id = l.id where l.changed_xid >= ${since}::xid8
        union select 'node', n.id from nodes n where n.changed_xid >= ${since}::xid8
        union select 'project', p.id from projects p where p.changed_xid >= ${since}::xid8) c on true`.execute(db);
  const nodeIds: string[] = [];
  const projectIds: string[] = [];
  for (const r of rows) {
    if (r.kind === 'node') nodeIds.push(r.id!);
    else if (r.kind === 'project') projectIds.push(r.id!);
  }
  return { watermark: rows[0]!.watermark, full: false, nodeIds, projectIds };
}
