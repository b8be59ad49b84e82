import type { Selectable } from 'kysely';
import type { ApiToken, Project, ProjectQuota, Role, User } from '../domain/identity.js';
import type { InventoryNode, NodeFacts, NodeView } from '../domain/inventory.js';
import type { ApiTokensTable, NodesTable, ProjectsTable, UsersTable } from './database.js';

/**
 * Rows to domain objects: only the domain's fields (never `token_hash`, `removed_at`, join helpers), fresh
 * objects the caller cannot use to reach into the driver's result.
 */

export function toProject(row: Selectable<ProjectsTable>): Project {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    quota: row.quota as ProjectQuota,
    notice_offsets_ms: row.notice_offsets_ms === null || row.notice_offsets_ms === undefined ? null : (row.notice_offsets_ms as number[]).map(Number),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function toUser(row: Selectable<UsersTable>): User {
  return { id: row.id, name: row.name, project_id: row.project_id, role: row.role as Role, created_at: row.created_at };
}

export function toToken(row: Selectable<ApiTokensTable>): ApiToken {
  return {
    id: row.id,
    user_id: row.user_id,
    prefix: row.prefix,
    description: row.description,
    created_at: row.created_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
  };
}

export function toInventoryNode(row: Selectable<NodesTable>): InventoryNode {
  return {
    id: row.id,
    name: row.name,
    resource_class: row.resource_class,
    owner: row.owner,
    lessee: row.lessee,
    properties: row.properties,
    traits: row.traits,
    facts: row.facts as NodeFacts,
    power_state: row.power_state,
    provision_state: row.provision_state,
    target_provision_state: row.target_provision_state,
    maintenance: row.maintenance,
    maintenance_reason: row.maintenance_reason,
    last_error: row.last_error,
    console_enabled: row.console_enabled,
    extra: row.extra,
    driver_updated_at: row.driver_updated_at,
    synced_at: row.synced_at,
  };
}

/** A node row joined with its resolved owner project (see queries/node-view-query.ts). */
export type NodeViewRow = Selectable<NodesTable> & {
  owner_project_id: string | null;
  owner_project_name: string | null;
};

export function toNodeView(row: NodeViewRow): NodeView {
  const ownerProject =
    row.owner_project_id !== null && row.owner_project_name !== null
      ? { id: row.owner_project_id, name: row.owner_project_name }
      : null;
  return {
    ...toInventoryNode(row),
    owner_project: ownerProject,
    quarantined_at: row.quarantined_at,
    quarantine_reason: row.quarantine_reason,
  };
}
