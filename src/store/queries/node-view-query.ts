import { sql, type Kysely, type SqlBool } from 'kysely';
import { idPrefixPattern } from '../../domain/ids.js';
import { FINAL_ALLOCATION_STATES } from '../../domain/leasing.js';
import type { Database } from '../database.js';
import type { NodeFilter, NodeVisibility } from '../store.js';

/** The owner project's columns, resolved from the raw `owner` at query time. */
const ownerProjectId = sql<string | null>`coalesce(by_id.id, by_name.id)`;
const ownerProjectName = sql<string | null>`coalesce(by_id.name, by_name.name)`;

/**
 * The base query behind getNode and listNodes: live nodes (not removed, unless asked) that `visibility`
 * allows, with the raw Ironic `owner` resolved to a project by id or by name at read time — so a project
 * created after the sync matches at once. Two plain joins rather than a correlated lookup (both are hash
 * joins on unique keys); a match by id wins over a project that happens to be named like another's id.
 */
export function nodeViewQuery(
  db: Kysely<Database>,
  visibility: NodeVisibility,
  filter: NodeFilter = {},
  options: { readonly includeRemoved?: boolean } = {},
) {
  let query = db
    .selectFrom('nodes as n')
    .leftJoin('projects as by_id', (join) => join.on(sql<SqlBool>`by_id.id::text = n.owner`))
    .leftJoin('projects as by_name', (join) => join.on(sql<SqlBool>`by_name.name = n.owner`))
    .selectAll('n')
    .select([ownerProjectId.as('owner_project_id'), ownerProjectName.as('owner_project_name')]);
  if (!options.includeRemoved) query = query.where('n.removed_at', 'is', null);

  if (visibility.kind === 'project') {
    // The raw comparison narrows through the owner index; the resolved one keeps a project named like another
    // project's id from seeing that project's nodes. A lessee also sees the nodes its leases grant at `now`,
    // decided from the lease table at the instant of the request.
    const owns = sql<SqlBool>`(n.owner in (${visibility.projectId}, ${visibility.projectName}) and ${ownerProjectId} = ${visibility.projectId})`;
    query = query.where(
      visibility.now === undefined
        ? owns
        : sql<SqlBool>`(${owns} or n.id in (${leasedAt(visibility.projectId, visibility.now)}))`,
    );
  }
  if (filter.owner !== undefined) {
    const owner = filter.owner;
    query = query.where(
      sql<SqlBool>`(n.owner = ${owner} or ${ownerProjectId}::text = ${owner} or ${ownerProjectName} = ${owner})`,
    );
  }
  if (filter.resource_class !== undefined) query = query.where('n.resource_class', '=', filter.resource_class);
  if (filter.provision_state !== undefined) query = query.where('n.provision_state', '=', filter.provision_state);
  if (filter.power_state !== undefined) query = query.where('n.power_state', '=', filter.power_state);
  if (filter.maintenance !== undefined) query = query.where('n.maintenance', '=', filter.maintenance);
  if (filter.ids !== undefined) {
    // No ids matches no node (an `IN ()` is not valid SQL).
    query = filter.ids.length === 0 ? query.where(sql<SqlBool>`false`) : query.where('n.id', 'in', [...filter.ids]);
  }
  // Ironic's uuids are lower case; `lower` keeps a node id written otherwise findable by its printed prefix.
  if (filter.id_prefix !== undefined) query = query.where(sql<SqlBool>`lower(n.id) like ${idPrefixPattern(filter.id_prefix)}`);
  return query;
}

/** The listing order: name (unnamed nodes first), then id. Matches the nodes_sort_idx index. */
export const NODE_SORT_KEY = [sql`coalesce(n.name, '')`, sql`n.id`] as const;

/** Nodes on which `projectId` holds a lease granting access at `now` (see `handedOver`). */
export function leasedAt(projectId: string, now: Date) {
  return sql`select a.node_id from allocations a join leases l on l.id = a.lease_id
    where l.project_id = ${projectId} and ${grantsAccessAt(now)}`;
}

/** For allocation `a` joined to its lease `l`: it grants access to its node at `now` (as currentLeases decides). */
export function grantsAccessAt(now: Date) {
  return sql<SqlBool>`a.holds and a.period @> ${now}::timestamptz and l.state not in ('cancelled', 'failed') and ${handedOver} and ${notSubleasedAt(now)}`;
}

/** FINAL_ALLOCATION_STATES as SQL literals (constants rather than parameters, so the planner sees them). */
export const FINAL_STATES_SQL = sql.join(FINAL_ALLOCATION_STATES.map((state) => sql.lit(state)));

/**
 * The part of an access decision beyond the lease's times (for allocation `a`): the node is not quarantined, and
 * no earlier allocation on it is still unfinished — so when cleaning overruns the gap, the next lessee gets the
 * node when it is clean, never before (wipe before reuse). Access still ends exactly at the lease's end.
 */
export const handedOver = sql<boolean>`not exists (select 1 from nodes q where q.id = a.node_id and q.quarantined_at is not null)
  and not exists (select 1 from allocations prev where prev.node_id = a.node_id and prev.holds
    and lower(prev.period) < lower(a.period) and prev.state not in (${FINAL_STATES_SQL})
    and prev.id is distinct from a.parent_allocation_id)`;

/**
 * For allocation `a` at `now`: no sub-lease carved from it holds the node then — one running, or one that began
 * and is not finished yet (its node is being cleaned for the lessee that lent it, as for any next lessee). While
 * one does, the sub-lessee (or nobody) has the node and the lessee that offered it has no access (domain/subleasing.ts).
 */
export function notSubleasedAt(now: Date) {
  return sql<boolean>`not exists (select 1 from allocations s where s.parent_allocation_id = a.id and s.holds
    and (s.period @> ${now}::timestamptz or (lower(s.period) <= ${now}::timestamptz and s.state not in (${FINAL_STATES_SQL}))))`;
}
