import { formatDuration } from '../duration.js';
import type { PlanNode } from '../inventory.js';
import { offerAllows, type Offer } from '../leasing.js';
import type { Interval } from './interval.js';
import { offerCovers } from './offer-windows.js';

/** A window already held on a node (an allocation), with its cleaning gap. */
export interface Held {
  readonly node_id: string;
  readonly start: number;
  /** The end of the lease plus the cleaning gap booked with it. */
  readonly blockedUntil: number;
  /**
   * A sub-lease (booked from a lessee's sub-offer, domain/subleasing.ts): it only competes with other sub-leases,
   * as a lease from an owner's offer only competes with other such leases — a sub-lease lies inside its parent.
   */
  readonly sub?: boolean;
}

/** Why a node cannot serve a window; `null` means it can. */
export type Refusal =
  | { readonly kind: 'unhealthy'; readonly reason: string }
  | { readonly kind: 'policy'; readonly reason: string }
  | { readonly kind: 'busy'; readonly reason: string };

export interface AssessContext {
  readonly project: { readonly id: string; readonly name: string };
  readonly now: number;
  readonly gapMs: number;
  /** The offers in force per node (a map, or the planning index's lookup). */
  readonly offersByNode: Pick<ReadonlyMap<string, readonly Offer[]>, 'get'>;
  readonly heldByNode: ReadonlyMap<string, readonly Held[]>;
  /** Nodes known to be in use by the lease being assessed (an extension): their provision state is expected. */
  readonly inUse?: ReadonlySet<string>;
  /**
   * Assessing an extension: an offer's `max_total_ms`, when set, replaces its `max_lease_ms` (which bounds the lease
   * as booked; extension-policy.ts has the time rules of extending).
   */
  readonly extending?: boolean;
}

/** The longest lease an offer allows: as booked, or after extensions when it has a total limit. */
export function offerLengthCap(o: Pick<Offer, 'max_lease_ms' | 'max_total_ms'>, extending: boolean | undefined): number | null {
  return extending && o.max_total_ms !== null ? o.max_total_ms : o.max_lease_ms;
}

/**
 * Can `node` serve `window` for the project? Checked in the order a person would explain it: the node's health
 * (maintenance, quarantine, an unexpected provision state), the owner's policy (an offer covering the whole
 * window that allows this project and this length — an owner may lease its own nodes without one), and whether
 * the window plus the cleaning gap is free.
 */
export function assessNode(node: PlanNode, window: Interval, ctx: AssessContext): Refusal | null {
  const held = ctx.heldByNode.get(node.id) ?? [];
  if (node.maintenance) {
    return { kind: 'unhealthy', reason: `in maintenance${node.maintenance_reason ? ` (${node.maintenance_reason})` : ''}` };
  }
  if (node.quarantined_at) return { kind: 'unhealthy', reason: 'quarantined after a failed cleaning' };
  // A node in use or being cleaned is not `available` now, and that is fine for a later window.
  const busyNow = ctx.inUse?.has(node.id) || held.some((h) => h.start <= ctx.now && ctx.now < h.blockedUntil);
  if (node.provision_state !== 'available' && !busyNow) {
    return { kind: 'unhealthy', reason: `not available (provision state "${node.provision_state}")` };
  }
  const policy = checkPolicy(node, window, ctx);
  if (typeof policy === 'string') return { kind: 'policy', reason: policy };
  // Per level an allowing offer covers the window at: free at one of them is enough. No cleaning gap after a
  // sub-lease: the node goes back to the lessee that offered it, not to the pool.
  let clash: Held | undefined;
  for (const sub of policy) {
    const gap = sub ? 0 : ctx.gapMs;
    clash = held.find((h) => (h.sub ?? false) === sub && h.start < window.end + gap && window.start < h.blockedUntil);
    if (!clash) return null;
  }
  return { kind: 'busy', reason: `leased until ${new Date(clash!.blockedUntil).toISOString()} (incl. cleaning)` };
}

/**
 * The owner's policy for the window: a reason it refuses, or the levels at which an offer allowing the project
 * covers it (false: an owner's offer, or the owner itself; true: a lessee's sub-offer).
 */
function checkPolicy(node: Pick<PlanNode, 'id' | 'owner_project'>, window: Interval, ctx: Omit<AssessContext, 'heldByNode'>): string | readonly boolean[] {
  if (node.owner_project?.id === ctx.project.id) return [false];
  const offers = ctx.offersByNode.get(node.id) ?? [];
  if (offers.length === 0) return 'not offered';
  const duration = window.end - window.start;
  const covering = offers.filter((o) => offerCovers(o, window));
  if (covering.length === 0) {
    // Inside an offer's period but across the edge of its weekly windows: said so, the lessee can move the lease.
    const weekly = offers.some((o) => o.weekly && o.start.getTime() <= window.start && (o.end === null || o.end.getTime() >= window.end));
    return weekly ? "outside the offer's weekly windows" : 'no offer covers the whole window';
  }
  let reason = '';
  const levels = new Set<boolean>();
  for (const o of covering) {
    if (!offerAllows(o, ctx.project.id)) {
      reason ||= 'not offered to this project';
    } else if (offerLengthCap(o, ctx.extending) !== null && duration > offerLengthCap(o, ctx.extending)!) {
      reason = `offer allows at most ${formatDuration(offerLengthCap(o, ctx.extending)!)}`;
    } else if (o.min_lease_ms !== null && duration < o.min_lease_ms) {
      reason = `offer requires at least ${formatDuration(o.min_lease_ms)}`;
    } else {
      levels.add(o.parent_allocation_id != null);
    }
  }
  return levels.size > 0 ? [...levels] : reason;
}

/**
 * What can be told of `node` for `window` without its bookings: false when it is in maintenance, quarantined or
 * refused by its owner's policy. A node whose provision state is not `available` may still serve a later window
 * if it is in use now, which only its bookings tell: it passes here. The planner ranks only the nodes that pass
 * and asks the store about the bookings of the best few.
 */
export function mayServe(node: PlanNode, window: Interval, ctx: Omit<AssessContext, 'heldByNode'>): boolean {
  if (node.maintenance || node.quarantined_at) return false;
  return typeof checkPolicy(node, window, ctx) !== 'string';
}
