import { sql, type Kysely } from 'kysely';
import type { NodeFacts, PlanNode } from '../../domain/inventory.js';
import type { Database } from '../database.js';
import { selectOffers, toOffer } from '../leasing-rows.js';
import type { PlanningChanges } from '../store.js';

interface ChangedNodeRow {
  watermark: string;
  id: string | null;
  name: string | null;
  facts: NodeFacts | null;
  traits: string[] | null;
  maintenance: boolean | null;
  maintenance_reason: string | null;
  provision_state: string | null;
  quarantined_at: Date | null;
  removed: boolean | null;
  owner_project_id: string | null;
  owner_project_name: string | null;
}

/**
 * The nodes and offers written since `since` (a watermark this query returned before; null: all of them), with
 * only the columns planning reads, and the new watermark: the oldest transaction still running when the nodes
 * were read (migration 0009 says why that never misses a change). One statement for the nodes and the watermark
 * (the watermark row comes back even when nothing changed); one for the offers, read later, so at or after it.
 */
export async function planningChanges(db: Kysely<Database>, since: string | null): Promise<PlanningChanges> {
  const from = since ?? '0';
  const { rows } = await sql<ChangedNodeRow>`
    select w.xmin::text as watermark, c.*
      from (select pg_snapshot_xmin(pg_current_snapshot()) as xmin) w
      left join lateral (
        select n.id, n.name, n.facts, n.traits, n.maintenance, n.maintenance_reason, n.provision_state, n.quarantined_at,
               n.removed_at is not null as removed,
               coalesce(by_id.id, by_name.id) as owner_project_id, coalesce(by_id.name, by_name.name) as owner_project_name
          from nodes n
          left join projects by_id on by_id.id = n.owner
          left join projects by_name on by_name.name = n.owner
         where n.changed_xid >= ${from}::xid8) c on true`.execute(db);
  const offers = await selectOffers(db).where(sql<boolean>`o.changed_xid >= ${from}::xid8`).execute();
  const nodes: PlanningChanges['nodes'][number][] = [];
  for (const r of rows) {
    if (r.id === null) continue;
    const node: PlanNode = {
      id: r.id,
      name: r.name,
      facts: r.facts ?? {},
      traits: r.traits ?? [],
      maintenance: r.maintenance ?? false,
      maintenance_reason: r.maintenance_reason,
      provision_state: r.provision_state ?? '',
      quarantined_at: r.quarantined_at,
      owner_project: r.owner_project_id !== null && r.owner_project_name !== null ? { id: r.owner_project_id, name: r.owner_project_name } : null,
    };
    nodes.push({ node, removed: r.removed === true });
  }
  return { watermark: rows[0]!.watermark, full: since === null, nodes, offers: offers.map(toOffer) };
}
