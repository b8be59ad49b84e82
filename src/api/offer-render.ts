import type { Offer } from '../domain/leasing.js';
import { subtract, type Interval } from '../domain/scheduling/interval.js';
import { offerIntervals } from '../domain/scheduling/offer-windows.js';
import type { HoldsCopy } from '../leasing/holds-copy.js';
import type { OfferStatus } from '../store/leasing-store.js';
import type { ApiDeps } from './context.js';
import { projectNamesOf } from './project-names.js';
import { offerJson } from './serializers.js';

/**
 * How far ahead an offer with weekly windows lists its free windows: they recur for ever, so the next four weeks
 * (about 20 windows for nights and weekends) rather than an endless list.
 */
export const WEEKLY_FREE_HORIZON_MS = 28 * 86_400_000;

export function offerStatus(o: Offer, now: Date): OfferStatus {
  if (o.withdrawn_at) return 'withdrawn';
  if (o.end && o.end.getTime() <= now.getTime()) return 'expired';
  if (o.start.getTime() > now.getTime()) return 'scheduled';
  return 'active';
}

/** Offers as JSON with their node's name and facts, their status and free windows (from now on, inside their weekly windows, minus bookings and cleaning gaps). */
export async function renderOffers(deps: Pick<ApiDeps, 'clock' | 'store' | 'leasing'>, offers: readonly Offer[], held?: HoldsCopy) {
  const now = deps.clock.now();
  const nodeIds = [...new Set(offers.map((o) => o.node_id))];
  // The nodes' names and facts and the offering and allowed projects' names, read once for the page: a lessee
  // chooses an offer by the node's hardware; an owner may not list other projects. The windows held on the nodes
  // are planning's holds (allocations alone, no lease joined; this replica's copy when given, leasing/holds-copy.ts),
  // the nodes' names and facts this replica's planning index (measured on PGlite at 10,000 nodes, a page of 1,000
  // offers: whole node rows 35 ms and bookings joined to their leases 21 ms; the two columns 15 ms).
  const [bookings, nodes, projects] = await Promise.all([
    held ? held.from(nodeIds, now) : deps.store.leasing.holds(nodeIds, now, null),
    deps.leasing.nodeFacts(nodeIds),
    projectNamesOf(deps.store, offers.flatMap((o) => [o.project_id, ...(o.allowed_projects ?? [])])),
  ]);
  // By node once, not filtered per offer (a page of 1,000 offers scanned every booking 1,000 times).
  const busyByNode = new Map<string, Interval[]>();
  // Keyed by level too: a sub-offer is free where no other sub-lease is (its parent's booking is what it is carved from).
  for (const b of bookings) {
    const key = `${b.node_id}:${b.sub === true}`;
    const list = busyByNode.get(key) ?? [];
    list.push({ start: b.start.getTime(), end: b.blocked_until.getTime() });
    busyByNode.set(key, list);
  }
  return offers.map((o) => {
    const from = now.getTime();
    const to = o.weekly ? from + WEEKLY_FREE_HORIZON_MS : Infinity;
    const busy = busyByNode.get(`${o.node_id}:${o.parent_allocation_id !== null}`) ?? [];
    const free = o.withdrawn_at ? [] : subtract(offerIntervals(o, { start: from, end: to }), busy);
    const node = nodes.get(o.node_id);
    return offerJson(o, { node_name: node?.name ?? null, node_facts: node?.facts ?? null, status: offerStatus(o, now), free_windows: free, project_names: projects });
  });
}
