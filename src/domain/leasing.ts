/** Offers, leases, allocations and events: the leasing model (pure data). Times are Dates in UTC. */
import type { LeaveReason, ReplacePolicy } from './replacement.js';
import type { AutoRenew } from './auto-renew.js';
import type { WeeklySchedule } from './scheduling/weekly-windows.js';

export const LeaseState = {
  Pending: 'pending',
  Active: 'active',
  Ending: 'ending',
  Ended: 'ended',
  Cancelled: 'cancelled',
  Failed: 'failed',
} as const;
export type LeaseState = (typeof LeaseState)[keyof typeof LeaseState];
/** Every lease state, in lifecycle order: the API's enum (and from it the CLI's and the web UI's types). */
export const LEASE_STATES: readonly LeaseState[] = Object.values(LeaseState);
/** A lease in one of these changes no more (no extension, no end). */
export const FINISHED_LEASE_STATES: readonly LeaseState[] = [LeaseState.Ended, LeaseState.Cancelled, LeaseState.Failed];

export const AllocationState = {
  /** Booked; the lease has not started. */
  Reserved: 'reserved',
  /** The engine is handing the node to the lessee (setting `lessee`). */
  Starting: 'starting',
  Active: 'active',
  /** The lease ended: the engine is taking access away and cleaning the node. */
  Releasing: 'releasing',
  /** Clean and back in the pool. */
  Released: 'released',
  /** Cleaning failed: the node takes no new lease until its owner or the operator clears it. */
  Quarantined: 'quarantined',
  /** The lease was cancelled before it started. */
  Cancelled: 'cancelled',
} as const;
export type AllocationState = (typeof AllocationState)[keyof typeof AllocationState];
/** An allocation in one of these has let go of its node: nothing left to hand over or take back. */
export const FINAL_ALLOCATION_STATES: readonly AllocationState[] = [AllocationState.Released, AllocationState.Quarantined, AllocationState.Cancelled];

/** The steps of an ending allocation, in order; each is idempotent, so a crash resumes at the recorded one. */
export const ReleaseStep = {
  ClearLessee: 'clear_lessee',
  /** Every network the lessee attached is taken off the node, and the ports Leasehold created deleted. */
  DetachNetworks: 'detach_networks',
  ConsoleOff: 'console_off',
  PowerOff: 'power_off',
  Clean: 'clean',
  WaitAvailable: 'wait_available',
} as const;
export type ReleaseStep = (typeof ReleaseStep)[keyof typeof ReleaseStep];
export const RELEASE_STEPS: readonly ReleaseStep[] = Object.values(ReleaseStep);

export interface Offer {
  readonly id: string;
  readonly node_id: string;
  readonly project_id: string;
  readonly start: Date;
  /** null: open-ended. */
  readonly end: Date | null;
  readonly max_lease_ms: number | null;
  readonly min_lease_ms: number | null;
  /** null: every project. */
  readonly allowed_projects: readonly string[] | null;
  readonly created_by: string | null;
  readonly created_at: Date;
  readonly withdrawn_at: Date | null;
  /** The owner may take the node back before a lease ends, with this much notice (ms); null: never. */
  readonly reclaim_notice_ms: number | null;
  /** The owner's price per node-hour (a decimal string) in `currency` (ISO 4217), or neither (migration 0014). */
  readonly price_per_node_hour?: string | null;
  readonly currency?: string | null;
  /** The lessee may extend only within this long of the end (ms); null: any time. */
  readonly extension_window_ms: number | null;
  /** An extension reaches at most this far from now (ms); null: no such limit. */
  readonly extension_max_ahead_ms: number | null;
  /** The whole lease never longer than this (ms); with it, max_lease_ms bounds only the lease as booked. */
  readonly max_total_ms: number | null;
  /** A sub-offer: the allocation of the offering lessee it is carved from (domain/subleasing.ts); null: the owner's. */
  readonly parent_allocation_id: string | null;
  /** A sub-offer: the lease of that allocation (what the API shows); null: the owner's. */
  readonly parent_lease_id?: string | null;
  /**
   * Recurring weekly windows within [start, end) in which the node is available (migration 0015); null or absent:
   * the whole period. A lease must lie wholly inside one window (domain/scheduling/offer-windows.ts).
   */
  readonly weekly?: WeeklySchedule | null;
}

/** Whether an offer lets `projectId` lease its node (null `allowed_projects`: every project). */
export function offerAllows(offer: Pick<Offer, 'allowed_projects'>, projectId: string): boolean {
  return offer.allowed_projects === null || offer.allowed_projects.includes(projectId);
}

/** What the lessee asked for, kept on the lease. */
export interface LeaseRequest {
  readonly nodes?: readonly string[];
  readonly groups?: readonly { readonly count: number; readonly where: string }[];
}

export interface Allocation {
  readonly id: string;
  readonly lease_id: string;
  readonly node_id: string;
  readonly group_index: number;
  readonly state: AllocationState;
  readonly step: ReleaseStep | null;
  readonly start: Date;
  readonly end: Date;
  readonly last_error: string | null;
  readonly updated_at: Date;
  /** Why the allocation left its lease before the lease's end, or null. */
  readonly leave_reason: LeaveReason | null;
  /** The instant it left (its window's end; for one that left before it started, the instant it was dropped). */
  readonly left_at: Date | null;
  /** The allocation this one took the place of, or null. */
  readonly replaces: string | null;
  /** A failure of its node recorded on it while the lease stays on the node (no substitute, or not asked for). */
  readonly failure: string | null;
  /** A sub-allocation: the allocation of the parent lease it is carved from (domain/subleasing.ts), or null. */
  readonly parent_allocation_id: string | null;
}

export interface Lease {
  readonly id: string;
  readonly name: string;
  readonly project_id: string;
  readonly created_by: string | null;
  readonly start: Date;
  readonly end: Date;
  readonly state: LeaseState;
  readonly request: LeaseRequest;
  readonly created_at: Date;
  readonly updated_at: Date;
  readonly cancelled_at: Date | null;
  /** What to do when one of its nodes fails (default auto: replace it). */
  readonly replace_policy: ReplacePolicy;
  /** The lessee's auto-renew, or null (domain/auto-renew.ts). */
  readonly auto_renew: AutoRenew | null;
  readonly allocations: readonly Allocation[];
}

/** A lease grants access to its nodes exactly while `start <= now < end` — decided from the times, never a flag. */
export function leaseGrantsAccess(lease: Pick<Lease, 'start' | 'end' | 'state'>, now: Date): boolean {
  if (lease.state === LeaseState.Cancelled || lease.state === LeaseState.Failed) return false;
  const t = now.getTime();
  return lease.start.getTime() <= t && t < lease.end.getTime();
}

export interface AuditEvent {
  readonly seq: string;
  readonly at: Date;
  readonly type: string;
  readonly outcome: 'ok' | 'error';
  readonly actor_user_id: string | null;
  /** A user name, or "engine". */
  readonly actor: string;
  readonly node_id: string | null;
  readonly lease_id: string | null;
  readonly offer_id: string | null;
  readonly project_id: string | null;
  readonly owner_project_id: string | null;
  readonly message: string;
  readonly details: Readonly<Record<string, unknown>>;
}

export type NewAuditEvent = Omit<AuditEvent, 'seq' | 'at' | 'outcome' | 'actor_user_id' | 'node_id' | 'lease_id' | 'offer_id' | 'project_id' | 'owner_project_id' | 'message' | 'details'> &
  Partial<Pick<AuditEvent, 'outcome' | 'actor_user_id' | 'node_id' | 'lease_id' | 'offer_id' | 'project_id' | 'owner_project_id' | 'message' | 'details'>>;
