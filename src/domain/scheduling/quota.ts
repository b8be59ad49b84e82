import { formatDuration } from '../duration.js';
import { PolicyViolationError } from '../errors.js';
import { calendarMonths, nodeHoursOf, nodeMsIn } from '../usage.js';
import type { Interval } from './interval.js';

/** A project's limits (its `quota`); null = no limit. */
export interface QuotaLimits {
  readonly max_nodes?: number | null;
  readonly max_lease_duration_ms?: number | null;
  /** Node-hours a project may book per calendar month (UTC). */
  readonly max_node_hours?: number | null;
}

/**
 * The span whose held windows `checkQuota` needs: the window itself for `max_nodes`, widened to whole calendar
 * months when a `max_node_hours` budget counts everything booked in each month the window touches. Null: no
 * limit needs them.
 */
export function quotaSpan(limits: QuotaLimits, window: Interval): Interval | null {
  if (limits.max_node_hours != null) {
    const months = calendarMonths(window);
    return { start: months[0]!.start, end: months[months.length - 1]!.end };
  }
  return limits.max_nodes != null ? window : null;
}

/** What a change would make the project hold: `nodes` nodes over `window`, on top of what it holds already. */
export interface QuotaAsk {
  /** For messages; absent: "the project". */
  readonly projectName?: string;
  readonly window: Interval;
  readonly nodes: number;
  /**
   * The windows of the allocations the project holds already (its other leases), at least those overlapping
   * `quotaSpan(limits, window)`.
   */
  readonly held: readonly Interval[];
}

/**
 * The most nodes held at one instant of `window` by `held`, and the first instant it is reached (`window.start`
 * when nothing overlaps). Half-open windows: one lease ending at the instant another begins are never counted together.
 */
export function peakHeld(held: readonly Interval[], window: Interval): { readonly count: number; readonly at: number } {
  const edges: Array<readonly [number, 1 | -1]> = [];
  for (const h of held) {
    const start = Math.max(h.start, window.start);
    const end = Math.min(h.end, window.end);
    if (start < end) edges.push([start, 1], [end, -1]);
  }
  // Ends before starts at the same instant.
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let count = 0;
  let peak = { count: 0, at: window.start };
  for (const [at, delta] of edges) {
    count += delta;
    if (count > peak.count) peak = { count, at };
  }
  return peak;
}

/**
 * The project quota, checked the same way by every path that changes what a project holds — a quote, a new lease,
 * an extension — and again by the store under a lock (two requests racing): the lease's length against
 * `max_lease_duration`, and the nodes held at the busiest instant of the window, with the ones asked for, against
 * `max_nodes` ("at a time": two leases one after the other count once). Throws PolicyViolationError naming the rule.
 */
export function checkQuota(limits: QuotaLimits, ask: QuotaAsk): void {
  const who = ask.projectName ?? 'the project';
  const duration = ask.window.end - ask.window.start;
  const maxMs = limits.max_lease_duration_ms ?? null;
  if (maxMs !== null && duration > maxMs) {
    throw new PolicyViolationError(
      `project quota: a lease of ${who} may last at most ${formatDuration(maxMs)}, not ${formatDuration(duration)}; ` +
        `the latest end allowed is ${new Date(ask.window.start + maxMs).toISOString()}`,
      {
        details: {
          rule: 'quota.max_lease_duration',
          max_lease_duration: formatDuration(maxMs),
          latest_end: new Date(ask.window.start + maxMs).toISOString(),
          earliest_start: null,
        },
      },
    );
  }
  checkNodeHours(limits, ask, who);
  const maxNodes = limits.max_nodes ?? null;
  if (maxNodes === null) return;
  const peak = peakHeld(ask.held, ask.window);
  if (peak.count + ask.nodes <= maxNodes) return;
  const already =
    peak.count === 0 ? '' : `; it already holds ${peak.count} at ${new Date(peak.at).toISOString()}, within this window`;
  throw new PolicyViolationError(
    `project quota: ${who} may hold at most ${maxNodes} node${maxNodes === 1 ? '' : 's'} at a time, and this asks for ${ask.nodes}${already}`,
    {
      details: {
        rule: 'quota.max_nodes',
        max_nodes: maxNodes,
        held: peak.count,
        requested: ask.nodes,
        at: new Date(peak.at).toISOString(),
        earliest_start: null,
      },
    },
  );
}

/**
 * The monthly budget: in each UTC calendar month the window touches, the node-hours the project has booked (its
 * other allocations' windows, as cut by early ends) plus the ones asked for must stay within `max_node_hours`.
 * Booked, not used: the future is not known yet, and use never exceeds what was booked.
 */
function checkNodeHours(limits: QuotaLimits, ask: QuotaAsk, who: string): void {
  const max = limits.max_node_hours ?? null;
  if (max === null) return;
  for (const month of calendarMonths(ask.window)) {
    const used = nodeMsIn(month, ask.held);
    const requested = nodeMsIn(month, [], { window: ask.window, nodes: ask.nodes });
    if (used + requested <= max * 3_600_000) continue;
    const label = new Date(month.start).toISOString().slice(0, 7);
    const remaining = Math.round(Math.max(0, max - nodeHoursOf(used)) * 1e6) / 1e6;
    throw new PolicyViolationError(
      `project quota: ${who} may book at most ${max} node-hours in ${label} (UTC); ${nodeHoursOf(used)} are booked ` +
        `and this asks for ${nodeHoursOf(requested)} more (${remaining} remain)`,
      {
        details: {
          rule: 'quota.max_node_hours',
          max_node_hours: max,
          month: label,
          booked_node_hours: nodeHoursOf(used),
          requested_node_hours: nodeHoursOf(requested),
          remaining_node_hours: remaining,
          earliest_start: null,
        },
      },
    );
  }
}
