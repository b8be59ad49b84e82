import { sql, type Kysely } from 'kysely';
import type { Allocation, AllocationState, AuditEvent, Lease, LeaseRequest, LeaseState, Offer, ReleaseStep } from '../domain/leasing.js';
import type { LeaveReason, ReplacePolicy } from '../domain/replacement.js';
import type { AutoRenew, AutoRenewState } from '../domain/auto-renew.js';
import type { Database } from './database.js';
import { parseWeeklyRule } from '../domain/scheduling/weekly-windows.js';

/** Row shapes and mappers for the leasing tables. Ranges are read as lower/upper bounds, never as text. */

const toMs = (v: string | number | null): number | null => (v === null ? null : Number(v));

export function selectOffers(db: Kysely<Database>) {
  return db
    .selectFrom('offers as o')
    .select([
      'o.id',
      'o.node_id',
      'o.project_id',
      'o.max_lease_ms',
      'o.min_lease_ms',
      'o.allowed_projects',
      'o.created_by',
      'o.created_at',
      'o.withdrawn_at',
      'o.reclaim_notice_ms',
      'o.currency',
      sql<string | null>`o.price_per_node_hour::text`.as('price_per_node_hour'),
      'o.extension_window_ms',
      'o.extension_max_ahead_ms',
      'o.max_total_ms',
      'o.parent_allocation_id',
      'o.weekly_rules',
      'o.weekly_timezone',
      sql<string | null>`(select pa.lease_id from allocations pa where pa.id = o.parent_allocation_id)`.as('parent_lease_id'),
      sql<Date>`lower(o.period)`.as('start'),
      sql<Date | null>`upper(o.period)`.as('end'),
    ]);
}
export type OfferRow = Awaited<ReturnType<ReturnType<typeof selectOffers>['executeTakeFirstOrThrow']>>;

export function toOffer(row: OfferRow): Offer {
  return {
    id: row.id,
    node_id: row.node_id,
    project_id: row.project_id,
    start: row.start,
    end: row.end,
    max_lease_ms: toMs(row.max_lease_ms),
    min_lease_ms: toMs(row.min_lease_ms),
    allowed_projects: row.allowed_projects,
    created_by: row.created_by,
    created_at: row.created_at,
    withdrawn_at: row.withdrawn_at,
    reclaim_notice_ms: toMs(row.reclaim_notice_ms),
    // numeric(14, 4) answers "2.5000": shown as the owner wrote it, less the padding.
    price_per_node_hour: row.price_per_node_hour === null ? null : row.price_per_node_hour.replace(/\.?0+$/, ''),
    currency: row.currency,
    extension_window_ms: toMs(row.extension_window_ms),
    extension_max_ahead_ms: toMs(row.extension_max_ahead_ms),
    max_total_ms: toMs(row.max_total_ms),
    parent_allocation_id: row.parent_allocation_id,
    parent_lease_id: row.parent_lease_id,
    // Stored canonical, written only after parsing: they parse again.
    weekly: row.weekly_rules === null || row.weekly_timezone === null ? null : { rules: row.weekly_rules.map((r) => parseWeeklyRule(r)), timezone: row.weekly_timezone },
  };
}

export function selectAllocations(db: Kysely<Database>) {
  return db
    .selectFrom('allocations as a')
    .select([
      'a.id',
      'a.lease_id',
      'a.node_id',
      'a.group_index',
      'a.state',
      'a.step',
      'a.last_error',
      'a.updated_at',
      'a.leave_reason',
      'a.left_at',
      'a.replaces',
      'a.failure',
      'a.parent_allocation_id',
      sql<Date>`lower(a.period)`.as('start'),
      sql<Date>`upper(a.period)`.as('end'),
    ]);
}
export type AllocationRow = Awaited<ReturnType<ReturnType<typeof selectAllocations>['executeTakeFirstOrThrow']>>;

export function toAllocation(row: AllocationRow): Allocation {
  return {
    id: row.id,
    lease_id: row.lease_id,
    node_id: row.node_id,
    group_index: row.group_index,
    state: row.state as AllocationState,
    step: row.step as ReleaseStep | null,
    start: row.start,
    end: row.end,
    last_error: row.last_error,
    updated_at: row.updated_at,
    leave_reason: row.leave_reason as LeaveReason | null,
    left_at: row.left_at,
    replaces: row.replaces,
    failure: row.failure,
    parent_allocation_id: row.parent_allocation_id,
  };
}

export interface LeaseRow {
      id: string;
      name: string;
      project_id: string;
      created_by: string | null;
      start_at: Date;
      end_at: Date;
      state: string;
      request: Record<string, unknown>;
      created_at: Date;
      updated_at: Date;
      cancelled_at: Date | null;
      replace_policy: string;
      auto_renew_step_ms?: string | number | null;
      auto_renew_until?: Date | null;
      auto_renew_state?: string | null;
      auto_renew_rule?: string | null;
      auto_renew_message?: string | null;
}

/** The lease's auto-renew from its columns (0011), or null when it has none. */
export function toAutoRenew(row: LeaseRow): AutoRenew | null {
  if (row.auto_renew_step_ms == null || !row.auto_renew_until || !row.auto_renew_state) return null;
  return {
    step_ms: Number(row.auto_renew_step_ms),
    until: row.auto_renew_until,
    state: row.auto_renew_state as AutoRenewState,
    rule: row.auto_renew_rule ?? null,
    message: row.auto_renew_message ?? null,
  };
}

export function toLease(row: LeaseRow, allocations: readonly Allocation[]): Lease {
  return {
    id: row.id,
    name: row.name,
    project_id: row.project_id,
    created_by: row.created_by,
    start: row.start_at,
    end: row.end_at,
    state: row.state as LeaseState,
    request: row.request as LeaseRequest,
    created_at: row.created_at,
    updated_at: row.updated_at,
    cancelled_at: row.cancelled_at,
    replace_policy: row.replace_policy as ReplacePolicy,
    auto_renew: toAutoRenew(row),
    allocations,
  };
}

/** Leases with their allocations, two queries whatever the number of leases. */
export async function loadLeases(db: Kysely<Database>, rows: readonly LeaseRow[]): Promise<Lease[]> {
  if (rows.length === 0) return [];
  const allocations = await selectAllocations(db)
    .where(
      'a.lease_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('a.group_index')
    .orderBy('a.node_id')
    .execute();
  const byLease = new Map<string, Allocation[]>();
  for (const a of allocations) {
    const list = byLease.get(a.lease_id) ?? [];
    list.push(toAllocation(a));
    byLease.set(a.lease_id, list);
  }
  return rows.map((r) => toLease(r, byLease.get(r.id) ?? []));
}

export type EventRow = Omit<AuditEvent, 'seq' | 'outcome' | 'details'> & {
  seq: string;
  outcome: string;
  details: Record<string, unknown>;
};

export function toEvent(row: EventRow): AuditEvent {
  return { ...row, seq: String(row.seq), outcome: row.outcome === 'error' ? 'error' : 'ok' };
}
