import type { NodeView } from './inventory.js';
import { offerAllows, type Offer } from './leasing.js';
import { merge, subtract, type Interval } from './scheduling/interval.js';
import { offerIntervals } from './scheduling/offer-windows.js';

/**
 * The availability timeline, pure: which nodes a caller gets as rows, what it may see of each booking on them
 * (its own leases and the leases on nodes it owns in full, another project's lease only as "busy"; the operator
 * everything), the offer windows it may lease from, and the windows still free for a new lease.
 */

/** The caller as the timeline needs it. */
export interface AvailabilityViewer {
  readonly isAdmin: boolean;
  readonly projectId: string | null;
}

/** An allocation holding a node, with what a caller may be shown of its lease. */
export interface BookingDetail {
  readonly node_id: string;
  readonly lease_id: string;
  readonly lease_name: string;
  readonly lease_state: string;
  readonly project_id: string;
  readonly project_name: string;
  readonly allocation_state: string;
  readonly start: Date;
  readonly end: Date;
  /** end + the cleaning gap booked with it. */
  readonly blocked_until: Date;
}

export interface BusyLease {
  readonly id: string;
  readonly name: string;
  readonly state: string;
  readonly project: { readonly id: string; readonly name: string };
}

/** A busy stretch on a node: the lease itself, or the cleaning after it. `lease` only when the caller may see it. */
export interface BusyInterval extends Interval {
  readonly kind: 'lease' | 'cleaning';
  readonly lease?: BusyLease;
}

/** Allocations still being taken back: their cleaning lasts until they are released, even past the gap. */
const CLEANING_STATES: ReadonlySet<string> = new Set(['releasing']);

/** Whether the caller's project owns the node. */
function ownsNode(viewer: AvailabilityViewer, node: Pick<NodeView, 'owner_project'>): boolean {
  return viewer.projectId !== null && node.owner_project?.id === viewer.projectId;
}

/**
 * Whether the caller may know whose lease a booking is: the operator, the lessee itself, and the node's owner
 * ("who leases my nodes"). Anyone else sees only that the node is busy.
 */
export function maySeeLease(
  viewer: AvailabilityViewer,
  node: Pick<NodeView, 'owner_project'>,
  booking: Pick<BookingDetail, 'project_id'>,
): boolean {
  return viewer.isAdmin || (viewer.projectId !== null && booking.project_id === viewer.projectId) || ownsNode(viewer, node);
}

/** Offers the caller may lease from or manages: the operator all, a project its own and those allowed to it. */
export function mayUseOffer(viewer: AvailabilityViewer, offer: Pick<Offer, 'project_id' | 'allowed_projects'>): boolean {
  if (viewer.isAdmin) return true;
  if (viewer.projectId === null) return false;
  return offer.project_id === viewer.projectId || offerAllows(offer, viewer.projectId);
}

/**
 * The nodes a caller gets as rows of the timeline for a window: every live node for the operator; for a project,
 * the nodes it owns, those offered to it in the window, and those it holds a lease on in the window. Sorted by
 * name (unnamed first), then id, as node lists are.
 */
export function timelineNodes(
  viewer: AvailabilityViewer,
  nodes: readonly NodeView[],
  offers: readonly Offer[],
  ownBookedNodeIds: ReadonlySet<string>,
): NodeView[] {
  let rows: NodeView[];
  if (viewer.isAdmin) {
    rows = [...nodes];
  } else {
    const offered = new Set(offers.filter((o) => o.withdrawn_at === null && mayUseOffer(viewer, o)).map((o) => o.node_id));
    rows = nodes.filter((n) => ownsNode(viewer, n) || offered.has(n.id) || ownBookedNodeIds.has(n.id));
  }
  return rows.sort(compareNodes);
}

export function compareNodes(a: Pick<NodeView, 'name' | 'id'>, b: Pick<NodeView, 'name' | 'id'>): number {
  const an = a.name ?? '';
  const bn = b.name ?? '';
  if (an !== bn) return an < bn ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * A node's busy stretches as the caller may see them, sorted by start: each booking's lease window and its
 * cleaning after it (until released, if that takes longer than the gap and is still going on at `now`). Another
 * project's bookings carry no lease and are merged where they touch, so a caller learns that the node is busy
 * and when, not by whom or how many leases.
 */
export function busyIntervals(
  viewer: AvailabilityViewer,
  node: Pick<NodeView, 'owner_project'>,
  bookings: readonly BookingDetail[],
  now: number,
): BusyInterval[] {
  const shown: BusyInterval[] = [];
  const hidden: { lease: Interval[]; cleaning: Interval[] } = { lease: [], cleaning: [] };
  for (const b of bookings) {
    const start = b.start.getTime();
    const end = b.end.getTime();
    let cleaningEnd = b.blocked_until.getTime();
    if (CLEANING_STATES.has(b.allocation_state) && end <= now && cleaningEnd < now) cleaningEnd = now;
    if (maySeeLease(viewer, node, b)) {
      const lease: BusyLease = { id: b.lease_id, name: b.lease_name, state: b.lease_state, project: { id: b.project_id, name: b.project_name } };
      shown.push({ start, end, kind: 'lease', lease });
      if (cleaningEnd > end) shown.push({ start: end, end: cleaningEnd, kind: 'cleaning', lease });
    } else {
      hidden.lease.push({ start, end });
      if (cleaningEnd > end) hidden.cleaning.push({ start: end, end: cleaningEnd });
    }
  }
  const out: BusyInterval[] = [
    ...shown,
    ...merge(hidden.lease).map((i) => ({ ...i, kind: 'lease' as const })),
    // Cleaning covered by a (merged) busy stretch says nothing more: only the parts outside one are shown.
    ...subtract(hidden.cleaning, hidden.lease).map((i) => ({ ...i, kind: 'cleaning' as const })),
  ];
  return out.sort((a, b) => a.start - b.start || (a.kind === b.kind ? 0 : a.kind === 'lease' ? -1 : 1));
}

/**
 * When a new lease could run on a node within [from, to): from `now` on, inside an offer the caller may lease
 * from (anywhere, on a node its project owns), and leaving every booking its cleaning gap — a new lease must end
 * `gapMs` before the next one starts and may start once the previous one's cleaning is over. An offer with weekly
 * windows counts only inside them. Empty for a node in
 * maintenance or quarantine.
 */
export function freeWindows(
  viewer: AvailabilityViewer,
  node: Pick<NodeView, 'owner_project' | 'maintenance' | 'quarantined_at'>,
  offers: readonly Pick<Offer, 'start' | 'end' | 'project_id' | 'allowed_projects' | 'withdrawn_at' | 'weekly'>[],
  busy: readonly Interval[],
  window: Interval,
  now: number,
  gapMs: number,
): Interval[] {
  if (node.maintenance || node.quarantined_at) return [];
  const lo = Math.max(window.start, now);
  if (lo >= window.end) return [];
  const base: Interval[] = !viewer.isAdmin && ownsNode(viewer, node)
    ? [{ start: lo, end: window.end }]
    : offers
        .filter((o) => o.withdrawn_at === null && mayUseOffer(viewer, o))
        // Only within its weekly windows, when it has any (a finite window: at most 93 days).
        .flatMap((o) => offerIntervals(o, { start: lo, end: window.end }));
  const blocked = busy.map((b) => ({ start: b.start - gapMs, end: b.end }));
  return subtract(base, blocked);
}

/** The offer windows on a node the caller may lease from, sorted by start (open-ended: end Infinity). */
export function offerWindows<O extends Pick<Offer, 'start' | 'end' | 'project_id' | 'allowed_projects' | 'withdrawn_at'>>(
  viewer: AvailabilityViewer,
  offers: readonly O[],
): O[] {
  return offers.filter((o) => o.withdrawn_at === null && mayUseOffer(viewer, o)).sort((a, b) => a.start.getTime() - b.start.getTime());
}

/** The longest window one availability request may cover. */
export const MAX_AVAILABILITY_WINDOW_MS = 93 * 86_400_000;
