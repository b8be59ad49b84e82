import { describeWeekly, formatWeeklyRule } from '../domain/scheduling/weekly-windows.js';
import { formatDuration } from '../domain/duration.js';
import type { ApiToken, Project, User } from '../domain/identity.js';
import type { NodeFacts, NodeView } from '../domain/inventory.js';
import { autoRenewJson, extensionPolicyJson, noticesJson } from './extension-schemas.js';
import type { NoticeEntry } from '../domain/notices.js';
import { messageWithNames } from '../domain/event-text.js';
import type { AuditEvent, Lease, Offer } from '../domain/leasing.js';
import type { LinkedLease, SubleaseLinks } from '../store/sublease-store.js';

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
      max_node_hours: p.quota.max_node_hours ?? null,
    },
    notice_offsets: p.notice_offsets_ms === null ? null : p.notice_offsets_ms.map(formatDuration),
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}

/** `projectName`: the name of the user's project, read with the page (null for an operator, who has none). */
export function userJson(u: User, projectName: string | null) {
  return { id: u.id, name: u.name, project_id: u.project_id, project_name: u.project_id === null ? null : projectName, role: u.role, created_at: iso(u.created_at) };
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

/**
 * A node as the caller may see it. A lessee sees what it needs to use the machine, not the owner's internals:
 * `last_error` and `maintenance_reason` are redacted, as Ironic does for lessees.
 */
export function nodeJson(
  n: NodeView,
  view: { access?: 'admin' | 'owner' | 'lessee'; lease?: NamedCurrentLease | null; sublease_of?: LinkedLease | null } = {},
) {
  const lessee = view.access === 'lessee';
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
    maintenance_reason: lessee && n.maintenance_reason ? '** redacted **' : n.maintenance_reason,
    last_error: lessee && n.last_error ? '** redacted **' : n.last_error,
    console_enabled: n.console_enabled,
    quarantined: n.quarantined_at !== null,
    quarantine_reason: lessee ? null : n.quarantine_reason,
    lease: view.lease ? nodeLeaseJson(view.lease, view.sublease_of) : null,
    synced_at: iso(n.synced_at),
  };
}

/** The lease granting access to a node now, with its lessee's name (the id when the project has no row). */
export interface NamedCurrentLease {
  readonly lease_id: string;
  readonly project_id: string;
  readonly project_name: string;
  readonly end: Date;
}

/** The lease granting access to a node now, as a node shows it (the chain only where it was read: one node). */
export function nodeLeaseJson(lease: NamedCurrentLease, sublease_of?: LinkedLease | null) {
  return {
    id: lease.lease_id,
    project_id: lease.project_id,
    project_name: lease.project_name,
    end: iso(lease.end),
    ...(sublease_of !== undefined ? { sublease_of: sublease_of ? linkedLeaseJson(sublease_of) : null } : {}),
  };
}

/** `project_names`: the names of the offering and allowed projects, read once for the page. */
export function offerJson(
  o: Offer,
  extra: {
    node_name: string | null;
    node_facts: NodeFacts | null;
    status: 'scheduled' | 'active' | 'expired' | 'withdrawn';
    free_windows: readonly { start: number; end: number }[];
    project_names: ReadonlyMap<string, string>;
  },
) {
  return {
    id: o.id,
    node_id: o.node_id,
    node_name: extra.node_name,
    node_facts: extra.node_facts === null ? null : { ...extra.node_facts },
    project_id: o.project_id,
    project_name: extra.project_names.get(o.project_id) ?? null,
    start: iso(o.start),
    end: isoOrNull(o.end),
    max_lease_duration: o.max_lease_ms === null ? null : formatDuration(o.max_lease_ms),
    min_lease_duration: o.min_lease_ms === null ? null : formatDuration(o.min_lease_ms),
    reclaim_notice: o.reclaim_notice_ms === null ? null : formatDuration(o.reclaim_notice_ms),
    price_per_node_hour: o.price_per_node_hour ?? null,
    currency: o.currency ?? null,
    ...extensionPolicyJson(o),
    allowed_projects: o.allowed_projects === null ? null : [...o.allowed_projects],
    allowed_project_names: o.allowed_projects === null ? null : o.allowed_projects.map((id) => extra.project_names.get(id) ?? null),
    weekly: o.weekly ? o.weekly.rules.map(formatWeeklyRule) : null,
    timezone: o.weekly ? o.weekly.timezone : null,
    weekly_summary: o.weekly ? describeWeekly(o.weekly) : null,
    sublease_of: o.parent_lease_id ?? null,
    status: extra.status,
    free_windows: extra.free_windows.map((w) => ({
      start: new Date(w.start).toISOString(),
      end: Number.isFinite(w.end) ? new Date(w.end).toISOString() : null,
    })),
    created_at: iso(o.created_at),
    withdrawn_at: isoOrNull(o.withdrawn_at),
  };
}

/** Names a lease response shows beside ids: its nodes', and its lessee project's. */
export interface LeaseNames {
  readonly nodes: ReadonlyMap<string, string | null>;
  readonly projects: ReadonlyMap<string, string>;
  /** Per lease, its notices before the end for its current end (issue 16). */
  readonly notices?: ReadonlyMap<string, readonly NoticeEntry[]>;
  /** The sub-leasing chain per allocation id (only those with a link). */
  readonly chain?: ReadonlyMap<string, SubleaseLinks>;
}

/** A lease at the other end of a sub-leasing link, as JSON. */
export function linkedLeaseJson(l: LinkedLease) {
  return { lease_id: l.lease_id, lease_name: l.lease_name, project_id: l.project_id, project_name: l.project_name, start: iso(l.start), end: iso(l.end), state: l.state };
}

/**
 * `now`: a lease whose end has come is shown `ending` (what it leads to) until the engine has taken its nodes back —
 * a lease ended early (`lease cancel`, the last node given back) used to answer `active` with an end in the past.
 */
export function leaseJson(l: Lease, names: LeaseNames, now: Date) {
  const nodeNames = names.nodes;
  return {
    id: l.id,
    name: l.name,
    project_id: l.project_id,
    project_name: names.projects.get(l.project_id) ?? l.project_id,
    state: (l.state === 'active' || l.state === 'pending') && l.end.getTime() <= now.getTime() ? 'ending' : l.state,
    start: iso(l.start),
    end: iso(l.end),
    request: {
      ...(l.request.nodes ? { nodes: [...l.request.nodes] } : {}),
      ...(l.request.groups ? { groups: l.request.groups.map((g) => ({ count: g.count, where: g.where })) } : {}),
    },
    allocations: l.allocations.map((a) => ({
      node_id: a.node_id,
      node_name: nodeNames.get(a.node_id) ?? null,
      group: a.group_index,
      group_number: a.group_index + 1,
      state: a.state,
      step: a.step,
      last_error: a.last_error,
      start: iso(a.start),
      end: iso(a.left_at ?? a.end),
      leave_reason: a.leave_reason,
      replaces: a.replaces === null ? null : (l.allocations.find((b) => b.id === a.replaces)?.node_id ?? null),
      failure: a.failure,
      sublease_of: names.chain?.get(a.id)?.parent ? linkedLeaseJson(names.chain.get(a.id)!.parent!) : null,
      subleases: (names.chain?.get(a.id)?.subleases ?? []).map(linkedLeaseJson),
    })),
    replace_policy: l.replace_policy,
    auto_renew: autoRenewJson(l.auto_renew),
    notices: noticesJson(names.notices?.get(l.id) ?? []),
    created_at: iso(l.created_at),
    updated_at: iso(l.updated_at),
  };
}

/**
 * `names`: node and project names by id for the ids the page's events mention (idsMentioned), read once per page:
 * the node and project columns and the message as people read them, beside the ids and the message as recorded.
 */
export function eventJson(e: AuditEvent, names: ReadonlyMap<string, string | null>) {
  return {
    seq: e.seq,
    at: iso(e.at),
    type: e.type,
    outcome: e.outcome,
    actor: e.actor,
    node_id: e.node_id,
    lease_id: e.lease_id,
    offer_id: e.offer_id,
    project_id: e.project_id,
    node_name: e.node_id === null ? null : (names.get(e.node_id) ?? null),
    project_name: e.project_id === null ? null : (names.get(e.project_id) ?? null),
    message: e.message,
    display_message: messageWithNames(e.message, names),
    details: e.details,
  };
}
