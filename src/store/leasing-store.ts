import type { ReplacePolicy } from '../domain/replacement.js';
import type { BookingDetail } from '../domain/availability.js';
import type { AuditEvent, Lease, LeaseRequest, NewAuditEvent, Offer } from '../domain/leasing.js';
import type { Interval } from '../domain/scheduling/interval.js';
import type { AvailabilityBookingFilter } from './queries/availability-bookings.js';
import type { Page, PageRequest } from './page.js';

/**
 * The leasing side of the store: offers, leases with their allocations, the audit log and quarantine. Every
 * change writes its audit events (and the engine's due tasks) in the same transaction, so nothing is lost.
 *
 * Errors: LeaseConflictError when allocations would overlap on a node (the exclusion constraint said so);
 * ConflictError when an offer overlaps another in force; NotFoundError for a missing lease or offer.
 */

export type NewOffer = Pick<
  Offer,
  'node_id' | 'project_id' | 'start' | 'end' | 'max_lease_ms' | 'min_lease_ms' | 'allowed_projects' | 'created_by'
> &
  Partial<Pick<Offer, 'reclaim_notice_ms' | 'price_per_node_hour' | 'currency' | 'extension_window_ms' | 'extension_max_ahead_ms' | 'max_total_ms' | 'parent_allocation_id' | 'weekly'>>;

export type OfferStatus = 'scheduled' | 'active' | 'expired' | 'withdrawn';

export interface OfferFilter {
  readonly node_id?: string;
  /** Offers on any of these nodes (e.g. those matching a requirement expression). */
  readonly node_ids?: readonly string[];
  /** The offering project. */
  readonly project_id?: string;
  readonly status?: OfferStatus;
  /** Offers a project may see: its own, and those it is allowed to lease from. */
  readonly visible_to?: string;
  /** Offers whose id starts with this (a short id as tables print it). */
  readonly id_prefix?: string;
  /** Offers in force overlapping [from, to). */
  readonly overlapping?: { readonly from: Date; readonly to: Date | null };
  /** Needed to tell the status apart. */
  readonly now: Date;
}

/** A window on a node held by a lease (allocations that hold), with its cleaning gap. */
export interface Booking {
  readonly node_id: string;
  readonly lease_id: string;
  readonly project_id: string;
  readonly start: Date;
  readonly end: Date;
  /** end + the cleaning gap in force when it was booked. */
  readonly blocked_until: Date;
  /** A sub-lease (inside its parent allocation's booking). */
  readonly sub?: boolean;
}

/** A window held on a node, as planning reads it (no join to the lease). */
export interface Hold {
  readonly node_id: string;
  readonly lease_id: string;
  readonly start: Date;
  /** The end of the lease plus the cleaning gap booked with it. */
  readonly blocked_until: Date;
  /** A sub-lease (inside its parent allocation's booking). */
  readonly sub?: boolean;
}

/** Where a window may start on one node (inclusive bounds, epoch ms), between the windows held on it. */
export interface FreeStarts {
  readonly node_id: string;
  readonly starts: readonly { readonly start: number; readonly end: number }[];
}

export interface CurrentLease {
  readonly lease_id: string;
  readonly project_id: string;
  readonly end: Date;
}

export interface NewLease {
  readonly name: string;
  readonly project_id: string;
  readonly created_by: string | null;
  readonly start: Date;
  readonly end: Date;
  readonly request: LeaseRequest;
  readonly allocations: readonly { readonly node_id: string; readonly group_index: number }[];
  /**
   * Per group (by index), the nodes that may replace a chosen one, best first (the chosen ones included). When
   * set, the booking locks nodes with try-locks and books, per group, the best it could lock that are still free
   * (a concurrent request took the others meanwhile), instead of failing on the first node taken; it fails with
   * LeaseConflictError only when these run out.
   */
  readonly alternatives?: readonly (readonly string[])[];
  readonly cleaning_gap_ms: number;
  /** Checked inside the transaction, under a per-project lock: nodes held at a time (domain/scheduling/quota.ts). */
  readonly max_nodes: number | null;
  /** Checked with it: node-hours booked per calendar month (migration 0014). */
  readonly max_node_hours?: number | null;
  /** What to do when one of its nodes fails (default auto). */
  readonly replace_policy?: ReplacePolicy;
}

/**
 * The order of a lease list: by start, earliest first (the API's default: what comes next), or newest first — by
 * creation, then by id so leases created in the same instant keep one order across pages.
 */
export const LeaseOrder = { Start: 'start', Newest: 'newest' } as const;
export type LeaseOrder = (typeof LeaseOrder)[keyof typeof LeaseOrder];
export const LEASE_ORDERS = Object.values(LeaseOrder);

export interface LeaseFilter {
  readonly project_id?: string;
  /** Leases of exactly this name (names are not unique: several may answer). */
  readonly name?: string;
  /** Leases whose id starts with this (a short id as tables print it). */
  readonly id_prefix?: string;
  readonly state?: string;
  readonly node_id?: string;
  /** Leases holding (or having held) a node this project owns: the owner's "who leases my nodes". */
  readonly owner?: { readonly project_id: string; readonly project_name: string };
  /** Leases a project may see: its own, and those on nodes it owns. */
  readonly visible_to?: { readonly project_id: string; readonly project_name: string };
}

export interface EventFilter {
  readonly node_id?: string;
  readonly lease_id?: string;
  readonly project_id?: string;
  readonly type?: string;
  readonly since?: Date;
  readonly until?: Date;
  /** Events a project may see: those concerning it as lessee or as owner. */
  readonly visible_to?: string;
}

export interface LeasingStore {
  createOffer(offer: NewOffer, events: readonly NewAuditEvent[], now: Date): Promise<Offer>;
  /**
   * Several offers, each with its events, in one transaction: all or none. ConflictError with `details.node_id`
   * when one overlaps an offer in force on its node (nothing is created then).
   */
  createOffers(offers: readonly { readonly offer: NewOffer; readonly events: readonly NewAuditEvent[] }[], now: Date): Promise<readonly Offer[]>;
  getOffer(id: string): Promise<Offer | null>;
  listOffers(filter: OfferFilter, page: PageRequest): Promise<Page<Offer>>;
  withdrawOffer(id: string, events: readonly NewAuditEvent[], now: Date): Promise<Offer>;
  /** Offers in force (not withdrawn) overlapping [from, to), on the given nodes or all. */
  offersInForce(nodeIds: readonly string[] | null, from: Date, to: Date | null): Promise<readonly Offer[]>;
  /**
   * Nodes with an offer open to `projectId` at or after `now` (not withdrawn, not over, allowing the project):
   * with the nodes it owns, what a project may lease and be told about.
   */
  offeredNodeIds(projectId: string, now: Date): Promise<readonly string[]>;
  /** Bookings whose blocked window overlaps [from, to), on the given nodes or all. */
  bookings(nodeIds: readonly string[] | null, from: Date, to: Date | null): Promise<readonly Booking[]>;
  /** The windows held on these nodes overlapping [from, to): planning's check of its few best candidates. */
  holds(nodeIds: readonly string[], from: Date, to: Date | null): Promise<readonly Hold[]>;
  /**
   * Per node, the instants in [from, to] at which a window of `spanMs` (lease plus cleaning gap) meets no held
   * window: what the earliest-start search sweeps over.
   */
  freeStarts(nodeIds: readonly string[], from: Date, to: Date, spanMs: number): Promise<readonly FreeStarts[]>;
  /**
   * Bookings whose blocked window overlaps [from, to), on the given nodes and/or of one project, with their lease's
   * name and state and the lessee's name (for the availability timeline; sorted by node, then start).
   */
  availabilityBookings(filter: AvailabilityBookingFilter): Promise<readonly BookingDetail[]>;

  createLease(lease: NewLease, events: readonly NewAuditEvent[], now: Date): Promise<Lease>;
  getLease(id: string): Promise<Lease | null>;
  /** In `order` (default by start), keyset-paginated: a marker keeps its place in either order. */
  listLeases(filter: LeaseFilter, page: PageRequest, order?: LeaseOrder): Promise<Page<Lease>>;
  /**
   * Moves a lease's end (extend, shorten, or end now): the allocations' windows, their cleaning gaps and the
   * engine's end tasks move with it. LeaseConflictError when the longer window meets the next lease;
   * PolicyViolationError when an extension would make the project hold more than `maxNodes` at a time; with
   * `expectEnd`, ConflictError (nothing changes) when the lease's end is no longer that (a renewal lost a race).
   */
  changeLeaseEnd(id: string, end: Date, cleaningGapMs: number, events: readonly NewAuditEvent[], now: Date, maxNodes?: number | null, maxNodeHours?: number | null, expectEnd?: Date | null): Promise<Lease>;
  /**
   * The windows of the allocations `projectId` holds overlapping [from, to), except one lease's: what the node
   * quota counts (domain/scheduling/quota.ts).
   */
  heldWindows(projectId: string, from: Date, to: Date, exceptLeaseId?: string): Promise<readonly Interval[]>;
  /** Cancels a lease that has not started: it stops holding its nodes and its tasks are dropped. */
  cancelLease(id: string, events: readonly NewAuditEvent[], now: Date): Promise<Lease>;
  /**
   * The lease granting access to each of these nodes at `now`, if any: its window contains `now`, the node is not
   * quarantined, and the node's previous lease has been released (cleaned).
   */
  currentLeases(nodeIds: readonly string[], now: Date): Promise<ReadonlyMap<string, CurrentLease>>;
  /** The ids of nodes on which `projectId` holds a lease granting access at `now`. */
  leasedNodeIds(projectId: string, now: Date): Promise<readonly string[]>;

  /** Clears a node's quarantine (its owner or the operator checked it). */
  clearQuarantine(nodeId: string, events: readonly NewAuditEvent[], now: Date): Promise<void>;

  appendEvents(events: readonly NewAuditEvent[], now: Date): Promise<void>;
  /** Newest first. */
  listEvents(filter: EventFilter, page: PageRequest): Promise<Page<AuditEvent>>;
}
