import { formatDuration } from '../duration.js';
import { offerAllows, type Offer } from '../leasing.js';
import type { Held } from './assess.js';
import { offerStretchEnd } from './offer-windows.js';

/**
 * How far a lessee may extend a lease by itself (issue 16, item 4). Each rule has a name the API returns
 * (error.details.rule, GET /v1/leases/{id}/extension's `limited_by.rule`):
 * - `extension_window`: the offer allows extending only within this long of the end (now >= end - window);
 * - `extension_max_ahead`: an extension reaches at most this far from now (Chameleon: "up to 7 days from now");
 * - `max_total_length`: the whole lease, start to end, never longer than this (with it, the offer's
 *   `max_lease_duration` bounds the lease as booked and this one bounds it after extensions);
 * - `max_lease_length`: the offer's longest lease (no `max_total_length`);
 * - `offer_end`: the offer itself ends;
 * - `offer_window`: the weekly window of the offer the lease lies in ends (an offer with weekly windows);
 * - `next_booking`: another lease booked on the node after this one (its start minus the cleaning gap);
 * - `project_max_lease_duration`: the lessee project's quota.
 * Shortening is never limited by these.
 */
export type ExtensionRule =
  | 'extension_window'
  | 'extension_max_ahead'
  | 'max_total_length'
  | 'max_lease_length'
  | 'offer_end'
  | 'offer_window'
  | 'next_booking'
  | 'project_max_lease_duration';

export type ExtensionOffer = Pick<
  Offer,
  'node_id' | 'start' | 'end' | 'allowed_projects' | 'max_lease_ms' | 'extension_window_ms' | 'extension_max_ahead_ms' | 'max_total_ms'
> &
  Partial<Pick<Offer, 'weekly'>>;

export interface ExtensionLease {
  readonly start: Date;
  readonly end: Date;
}

export interface ExtensionLimit {
  /** The latest end allowed now (ms); Infinity when nothing bounds it; the lease's end when it cannot be extended now. */
  readonly latest: number;
  /** The rule that sets `latest`, or null when nothing bounds it. */
  readonly rule: ExtensionRule | null;
  /** The node whose rule it is (a lease is limited by its most limited node), or null. */
  readonly node_id: string | null;
  /** Whether every node's extension window is open now (true when no offer has one). */
  readonly window_open: boolean;
  /** When the last window to open opens (ms), or null when all are open. */
  readonly window_opens_at: number | null;
}

const UNBOUNDED: ExtensionLimit = { latest: Infinity, rule: null, node_id: null, window_open: true, window_opens_at: null };

/** One offer's limit on extending `lease` at `now` (the offer covers the lease's start and allows the project). */
export function offerExtensionLimit(offer: ExtensionOffer, lease: ExtensionLease, now: number): ExtensionLimit {
  const end = lease.end.getTime();
  if (offer.extension_window_ms !== null && now < end - offer.extension_window_ms) {
    const opens = end - offer.extension_window_ms;
    return { latest: end, rule: 'extension_window', node_id: offer.node_id, window_open: false, window_opens_at: opens };
  }
  const caps: Array<[number, ExtensionRule]> = [];
  if (offer.end !== null) caps.push([offer.end.getTime(), 'offer_end']);
  // A lease lies in one weekly window; it can grow only to that window's end.
  if (offer.weekly) caps.push([offerStretchEnd({ start: offer.start, end: null, weekly: offer.weekly }, lease.start.getTime()), 'offer_window']);
  if (offer.max_total_ms !== null) caps.push([lease.start.getTime() + offer.max_total_ms, 'max_total_length']);
  else if (offer.max_lease_ms !== null) caps.push([lease.start.getTime() + offer.max_lease_ms, 'max_lease_length']);
  if (offer.extension_max_ahead_ms !== null) caps.push([now + offer.extension_max_ahead_ms, 'extension_max_ahead']);
  let limit: ExtensionLimit = { ...UNBOUNDED, node_id: offer.node_id };
  for (const [at, rule] of caps) if (at < limit.latest) limit = { ...limit, latest: at, rule };
  // A policy made stricter after booking never shortens the lease: it only stops extending it.
  return limit.latest < end ? { ...limit, latest: end } : limit;
}

export interface LeaseExtensionInput {
  readonly lease: ExtensionLease;
  readonly projectId: string;
  /** The lease's nodes still in it, and whether the project owns each (an owner's own node has no offer). */
  readonly nodes: readonly { readonly id: string; readonly owned: boolean }[];
  readonly offersByNode: ReadonlyMap<string, readonly ExtensionOffer[]>;
  /** Other leases' windows on these nodes (with their cleaning gaps). */
  readonly heldByNode: ReadonlyMap<string, readonly Held[]>;
  readonly gapMs: number;
  /** The project's quota on a lease's length, or null. */
  readonly projectMaxLeaseMs: number | null;
  readonly now: number;
}

/**
 * The latest end a lessee may extend `lease` to at `now`, and what limits it: per node the most generous offer
 * that covers the start and allows the project, then the next booking; the lease is limited by its most limited
 * node, then by the project's quota. "Extension outside the window" is the window rule with the lease's own end.
 */
export function leaseExtensionLimit(input: LeaseExtensionInput): ExtensionLimit {
  const { lease, now } = input;
  const start = lease.start.getTime();
  let result: ExtensionLimit = UNBOUNDED;
  let windowOpensAt: number | null = null;
  for (const node of input.nodes) {
    let nodeLimit: ExtensionLimit = { ...UNBOUNDED, node_id: node.id };
    if (!node.owned) {
      const offers = (input.offersByNode.get(node.id) ?? []).filter(
        (o) => o.start.getTime() <= start && offerAllows(o, input.projectId) && (o.end === null || o.end.getTime() > start),
      );
      const limits = offers.map((o) => offerExtensionLimit(o, lease, now));
      // No offer (withdrawn meanwhile): the node cannot be held longer than now.
      nodeLimit = limits.reduce<ExtensionLimit | null>((best, l) => (best === null || l.latest > best.latest ? l : best), null) ?? {
        ...UNBOUNDED,
        latest: lease.end.getTime(),
        rule: 'offer_end',
        node_id: node.id,
      };
      const closed = limits.filter((l) => !l.window_open);
      if (closed.length === limits.length && closed.length > 0) {
        const opens = Math.min(...closed.map((l) => l.window_opens_at!));
        windowOpensAt = Math.max(windowOpensAt ?? opens, opens);
      }
    }
    for (const h of input.heldByNode.get(node.id) ?? []) {
      const until = h.start - input.gapMs;
      if (h.start >= lease.end.getTime() && until < nodeLimit.latest) nodeLimit = { ...nodeLimit, latest: Math.max(until, lease.end.getTime()), rule: 'next_booking' };
    }
    if (nodeLimit.latest < result.latest) result = nodeLimit;
  }
  if (input.projectMaxLeaseMs !== null && start + input.projectMaxLeaseMs < result.latest) {
    result = { ...result, latest: Math.max(start + input.projectMaxLeaseMs, lease.end.getTime()), rule: 'project_max_lease_duration', node_id: null };
  }
  return { ...result, window_open: windowOpensAt === null, window_opens_at: windowOpensAt };
}

/** The refusal of an extension to `end` by `limit`, as a sentence naming the rule. */
export function extensionRuleMessage(limit: ExtensionLimit, end: Date, offer?: Pick<ExtensionOffer, 'extension_window_ms' | 'extension_max_ahead_ms' | 'max_total_ms'>): string {
  const until = `cannot extend to ${end.toISOString()}`;
  const latest = Number.isFinite(limit.latest) ? new Date(limit.latest).toISOString() : null;
  switch (limit.rule) {
    case 'extension_window':
      return `${until}: the offer allows extending only within ${offer?.extension_window_ms ? formatDuration(offer.extension_window_ms) : 'its window'} of the end (extension_window); the window opens at ${new Date(limit.window_opens_at ?? limit.latest).toISOString()}`;
    case 'extension_max_ahead':
      return `${until}: the offer allows extending at most ${offer?.extension_max_ahead_ms ? formatDuration(offer.extension_max_ahead_ms) : 'a limited time'} ahead of now (extension_max_ahead); the latest end allowed is ${latest}`;
    case 'max_total_length':
      return `${until}: the offer allows a lease of at most ${offer?.max_total_ms ? formatDuration(offer.max_total_ms) : 'a limited length'} in total (max_total_length); the latest end allowed is ${latest}`;
    default:
      return `${until}: the latest end allowed is ${latest ?? 'unbounded'} (${limit.rule ?? 'no rule'})`;
  }
}
