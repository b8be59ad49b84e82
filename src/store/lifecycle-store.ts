import type { Allocation, Lease, NewAuditEvent } from '../domain/leasing.js';
import type { ReplacePolicy } from '../domain/replacement.js';
import type { LeaveInput, ReplaceInput } from './queries/allocation-leave.js';

export type { LeaveInput, ReplaceInput } from './queries/allocation-leave.js';

/** An allocation with the lease it belongs to (the lease without its other allocations' details). */
export interface HeldAllocation {
  readonly allocation: Allocation;
  readonly lease: Lease;
}

/**
 * A lease's nodes changing while it runs (issue 16): allocations that leave their lease before its end: a node replaced by another, returned early, or taken
 * back by its owner with notice — each in one transaction with its events (allocation-leave.ts says how). Errors:
 * NotFoundError('allocation'), ConflictError (the allocation already left, or the lease is over), LeaseConflictError
 * (a substitute node that is not free for the rest of the window).
 */
export interface LifecycleStore {
  /** The allocation leaves at `input.at`; with `node_id`, a substitute takes the rest of the window. */
  leave(input: LeaveInput | ReplaceInput, events: readonly NewAuditEvent[], now: Date): Promise<Lease>;
  /** Records (or with null clears) a failure of the allocation's node, once per kind: true when it changed. */
  recordFailure(allocationId: string, failure: { readonly kind: string; readonly reason: string } | null, events: readonly NewAuditEvent[], now: Date): Promise<boolean>;
  /** The allocations on `nodeId` still in their lease whose window reaches past `from` (an owner's reclaim). */
  onNodeAfter(nodeId: string, from: Date): Promise<readonly HeldAllocation[]>;
  /** What a lease wants done when one of its nodes fails; the lease as it is now. */
  setReplacePolicy(leaseId: string, policy: ReplacePolicy, events: readonly NewAuditEvent[], now: Date): Promise<Lease>;
  /**
   * The node leaves the pool at `at` (an owner's reclaim): offers in force then end there, later ones are withdrawn.
   * Returns how many offers changed.
   */
  closeOffers(nodeId: string, at: Date, events: readonly NewAuditEvent[], now: Date): Promise<number>;
}
