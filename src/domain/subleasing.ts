/**
 * Sub-leasing, one level, as ESI (pure: no I/O). A lessee may offer a node it holds — an active or upcoming
 * allocation of its project's lease — to another project, within that allocation's window (a sub-offer). The
 * project that leases it (the sub-lessee) has the node inside both windows only, and the lessee that offered it has
 * no access meanwhile. Whatever cuts the parent allocation (the lease ends, is cancelled or shortened, the node is
 * returned, replaced or reclaimed) cuts the sub-lease at the same instant. A sub-lessee cannot offer it on.
 */
import { PolicyViolationError } from './errors.js';
import { Role, roleAtLeast, type Principal } from './identity.js';
import type { PolicySubject } from './policy-rules/rule-expression.js';

/** The node policy rule (policy-rules/default-rules.ts) that decides who may sub-offer a node. */
export const SUBLEASE_RULE = 'baremetal:node:sublease' as const;

/** The rules a refused sub-offer names (`details.rule` of the 409), besides the policy rule above. */
export const SubleaseRule = {
  /** A sub-offer lies inside the window of the allocation it is carved from. */
  WithinLease: 'sublease_within_lease',
  /** One level only: a node held through a sub-lease cannot be offered on. */
  OneLevel: 'sublease_one_level',
} as const;

/** A window on a node (times as Dates; a sub-offer is never open-ended: it ends with its parent). */
export interface Window {
  readonly start: Date;
  readonly end: Date;
}

/** An allocation a lessee holds on a node, as the sub-offer check reads it. */
export interface HeldAllocation extends Window {
  readonly id: string;
  readonly lease_id: string;
  /** Non-null when this allocation is itself a sub-lease. */
  readonly parent_allocation_id: string | null;
}

/**
 * The allocation a sub-offer is carved from: among the caller's project's allocations on the node still in their
 * lease, the one whose window holds `start` (the asked start, or now: then the current one, else the earliest one
 * to come). Null when the project holds none there: the caller is not a lessee of the node.
 */
export function parentFor(held: readonly HeldAllocation[], askedStart: Date | undefined, now: Date): HeldAllocation | null {
  const live = held.filter((a) => a.end.getTime() > now.getTime()).sort((a, b) => a.start.getTime() - b.start.getTime());
  const at = (askedStart ?? now).getTime();
  const holding = live.find((a) => a.start.getTime() <= at && at < a.end.getTime());
  if (holding) return holding;
  return askedStart === undefined ? (live[0] ?? null) : null;
}

/**
 * The facts the sub-leasing rule is decided on: `is_node_lessee` — the caller's project holds an active or upcoming
 * allocation on the node; `is_node_sublessee` — that allocation is a sub-lease.
 */
export function subleaseSubject(p: Principal, parent: Pick<HeldAllocation, 'parent_allocation_id'> | null, isOwner: boolean): PolicySubject {
  return {
    is_admin: p.role === Role.Admin,
    is_node_owner: isOwner,
    is_node_lessee: p.projectId !== null && parent !== null,
    is_node_sublessee: parent !== null && parent.parent_allocation_id !== null,
    role: p.role,
  };
}

/** Why the rule refused, in words for the 409 (a reader, a sub-lessee, or someone who holds nothing there). */
export function subleaseRefusal(p: Principal, parent: Pick<HeldAllocation, 'parent_allocation_id'> | null, nodeLabel: string): PolicyViolationError {
  if (parent?.parent_allocation_id) {
    return new PolicyViolationError(
      `node ${nodeLabel} is yours through a sub-lease: it cannot be offered on (one level of sub-leasing; rule ${SubleaseRule.OneLevel}, policy ${SUBLEASE_RULE})`,
      { details: { rule: SubleaseRule.OneLevel, policy_rule: SUBLEASE_RULE } },
    );
  }
  const why = parent && !roleAtLeast(p.role, Role.Member) ? 'readers cannot offer a leased node; a member can' : 'the policy does not allow you to offer this leased node';
  return new PolicyViolationError(`${why} (rule ${SUBLEASE_RULE})`, { details: { rule: SUBLEASE_RULE, policy_rule: SUBLEASE_RULE } });
}

/**
 * The window of a sub-offer: from the asked start (default: now, or the parent's start if later) to the asked end
 * (default: the parent's end), and it must lie inside the parent allocation's window as it is now (cut by a
 * replacement or a partial return: `end` is the allocation's, not the lease's). Anything else is a
 * PolicyViolationError naming the rule and the window allowed; nothing is written.
 */
export function subOfferWindow(parent: Window, asked: { readonly start?: Date; readonly end?: Date | null }, now: Date): Window {
  const floor = Math.max(parent.start.getTime(), now.getTime());
  const start = asked.start ?? new Date(floor);
  const end = asked.end ?? parent.end;
  const allowed = { start: new Date(floor).toISOString(), end: parent.end.toISOString() };
  if (parent.end.getTime() <= now.getTime()) {
    throw new PolicyViolationError(`your lease on this node ended at ${allowed.end}: nothing left to offer (rule ${SubleaseRule.WithinLease})`, {
      details: { rule: SubleaseRule.WithinLease, allowed },
    });
  }
  if (start.getTime() < parent.start.getTime() || end.getTime() > parent.end.getTime()) {
    throw new PolicyViolationError(
      `a sub-offer must lie within your lease on the node: from ${allowed.start} to ${allowed.end} at the latest (rule ${SubleaseRule.WithinLease})`,
      { details: { rule: SubleaseRule.WithinLease, allowed, field: start.getTime() < parent.start.getTime() ? 'start' : 'end' } },
    );
  }
  return { start, end };
}

/**
 * Where a sub-lessee has the node: inside both its own window and its parent allocation's (an empty window — null —
 * when they do not meet).
 */
export function effectiveWindow(parent: Window, sub: Window): Window | null {
  const start = Math.max(parent.start.getTime(), sub.start.getTime());
  const end = Math.min(parent.end.getTime(), sub.end.getTime());
  return end > start ? { start: new Date(start), end: new Date(end) } : null;
}

/**
 * What a cut of the parent allocation at `at` does to a sub-allocation: it is dropped if it had not begun by then
 * (`cancel`), cut at `at` if it runs past it (`cut`), left alone if it ends by then (`keep`).
 */
export function subleaseAfterCut(sub: Window, at: Date): 'cancel' | 'cut' | 'keep' {
  if (at.getTime() <= sub.start.getTime()) return 'cancel';
  if (at.getTime() < sub.end.getTime()) return 'cut';
  return 'keep';
}


/** What the engine reads of the allocation a sub-lease was carved from. */
export interface ParentHoldTimes {
  /** Still in its lease (not left: replaced, returned). */
  readonly in_lease: boolean;
  readonly start: Date;
  readonly end: Date;
}

/** Whether the lease a sub-lease was carved from still holds the node at `now` (the node then goes back to it). */
export function parentGoesOn<P extends ParentHoldTimes>(parent: P | null, now: Date): parent is P {
  const t = now.getTime();
  return parent !== null && parent.in_lease && parent.start.getTime() <= t && t < parent.end.getTime();
}
