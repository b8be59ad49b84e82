import { formatDuration } from '../domain/duration.js';
import type { ApiToken, Project, User } from '../domain/identity.js';
import type { NodeView } from '../domain/inventory.js';

/** Domain objects to their JSON form: RFC 3339 UTC timestamps, ISO 8601 durations, no secrets. */

const iso = (d: Date): string => d.toISOString();
const isoOrNull = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function projectJson(p: Project) {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    quota: {
      max_nodes: p.quota.max_nodes ?? null,
      max_lease_duration:
        p.quota.max_lease_duration_ms == null ? null : formatDuration(p.quota.max_lease_duration_ms),
    },
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}

export function userJson(u: User) {
  return { id: u.id, name: u.name, project_id: u.project_id, role: u.role, created_at: iso(u.created_at) };
}

export function tokenJson(t: ApiToken) {
  return {
    id: t.id,
    user_id: t.user_id,
    prefix: t.prefix,
    description: t.description,
    created_at: iso(t.created_at),
    expires_at: isoOrNull(t.expires_at),
    revoked_at: isoOrNull(t.revoked_at),
  };
}

export function nodeJson(n: NodeView) {
  return {
    id: n.id,
    name: n.name,
    resource_class: n.resource_class,
    owner: n.owner,
    owner_project: n.owner_project,
    lessee: n.lessee,
    facts: { ...n.facts },
    properties: { ...n.properties },
    traits: [...n.traits],
    power_state: n.power_state,
    provision_state: n.provision_state,
    target_provision_state: n.target_provision_state,
    maintenance: n.maintenance,
    maintenance_reason: n.maintenance_reason,
    last_error: n.last_error,
    console_enabled: n.console_enabled,
    synced_at: iso(n.synced_at),
  };
}
