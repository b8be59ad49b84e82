import { offerAllows, type Offer } from '../leasing.js';
import { assignInOrder } from './best-fit.js';
import type { Interval } from './interval.js';
import { offerIntervals } from './offer-windows.js';

/** Instants (epoch ms, both bounds included) at which a window may start. */
export type StartSet = readonly Interval[];

/** One group of a request for the earliest-start search: its candidates best first, each with where it may start. */
export interface StartGroup {
  readonly count: number;
  readonly candidates: readonly { readonly id: string; readonly starts: StartSet }[];
}

/**
 * Where a node's owner lets `projectId` start a lease of `durationMs`: within an offer that allows the project and
 * that length and still covers the whole lease (a start in [offer start, offer end − duration]). An owner needs no
 * offer for its own node (`owned`: always). An offer with weekly windows lets it start only where the whole lease
 * fits in one of them: those within `range` (a lease starting in it may end up to `durationMs` after its end).
 */
export function offerStarts(offers: readonly Offer[], projectId: string, durationMs: number, owned: boolean, range: Interval = { start: -Infinity, end: Infinity }): StartSet {
  if (owned) return [{ start: -Infinity, end: Infinity }];
  const starts: Interval[] = [];
  for (const o of offers) {
    if (o.withdrawn_at !== null || !offerAllows(o, projectId)) continue;
    if (o.max_lease_ms !== null && durationMs > o.max_lease_ms) continue;
    if (o.min_lease_ms !== null && durationMs < o.min_lease_ms) continue;
    if (o.weekly) {
      if (!Number.isFinite(range.start) || !Number.isFinite(range.end)) throw new RangeError('offerStarts needs a finite range for a weekly offer');
      for (const i of offerIntervals(o, { start: range.start, end: range.end + durationMs })) {
        if (i.end - durationMs >= i.start) starts.push({ start: i.start, end: i.end - durationMs });
      }
      continue;
    }
    const end = o.end === null ? Infinity : o.end.getTime() - durationMs;
    if (end >= o.start.getTime()) starts.push({ start: o.start.getTime(), end });
  }
  return starts.sort((a, b) => a.start - b.start);
}

/** The instants in both sets (inclusive intervals, each sorted by start). */
export function intersectStarts(a: StartSet, b: StartSet): StartSet {
  const out: Interval[] = [];
  for (const x of a) {
    for (const y of b) {
      const start = Math.max(x.start, y.start);
      const end = Math.min(x.end, y.end);
      if (start <= end) out.push({ start, end });
    }
  }
  return out.sort((p, q) => p.start - q.start);
}

/**
 * The earliest instant in [from, to] at which every group gets its count of distinct nodes, each free to start
 * then: a sweep over the instants at which a node becomes free (the only ones at which the answer can turn from
 * no to yes), keeping per group the nodes free at that instant, and matching them (assignInOrder, best first)
 * only where the counts allow. Null when no instant fits.
 */
export function earliestFeasibleStart(groups: readonly StartGroup[], from: number, to: number): number | null {
  type Edge = { readonly at: number; readonly group: number; readonly id: string; readonly opens: boolean };
  const edges: Edge[] = [];
  const rank = groups.map((g) => new Map(g.candidates.map((c, i) => [c.id, i])));
  groups.forEach((g, group) => {
    for (const c of g.candidates) {
      for (const s of c.starts) {
        const start = Math.max(s.start, from);
        const end = Math.min(s.end, to);
        if (start > end) continue;
        edges.push({ at: start, group, id: c.id, opens: true });
        if (end < to) edges.push({ at: end + 1, group, id: c.id, opens: false });
      }
    }
  });
  // At one instant: closes first (a node free until t − 1 is not free at t), then opens.
  edges.sort((a, b) => a.at - b.at || Number(a.opens) - Number(b.opens));
  const open = groups.map(() => new Map<string, number>());
  for (let i = 0; i < edges.length; ) {
    const at = edges[i]!.at;
    let opened = false;
    for (; i < edges.length && edges[i]!.at === at; i++) {
      const e = edges[i]!;
      const count = (open[e.group]!.get(e.id) ?? 0) + (e.opens ? 1 : -1);
      if (count > 0) open[e.group]!.set(e.id, count);
      else open[e.group]!.delete(e.id);
      opened ||= e.opens;
    }
    if (!opened || groups.some((g, k) => open[k]!.size < g.count)) continue;
    const assignment = assignInOrder(
      groups.map((g, k) => ({ count: g.count, candidates: [...open[k]!.keys()].sort((x, y) => rank[k]!.get(x)! - rank[k]!.get(y)!) })),
    );
    if (assignment.ok) return at;
  }
  return null;
}
