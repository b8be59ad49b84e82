import { evaluate } from '../expression/evaluate.js';
import type { Expr } from '../expression/ast.js';
import type { NodeView } from '../inventory.js';
import { assessNode, type AssessContext, type Refusal } from './assess.js';
import { assignBestFit, type Candidate } from './best-fit.js';
import type { Interval } from './interval.js';

/** One group of a request: `count` nodes matching `expr`, or one named node. */
export type GroupSpec =
  | { readonly count: number; readonly where: string; readonly expr: Expr }
  | { readonly count: 1; readonly node: NodeView; /** as the caller named it (uuid or name) */ readonly asked: string };

export interface GroupReport {
  readonly group: number;
  readonly count: number;
  readonly where: string;
  /** Nodes whose hardware matches. */
  readonly matching: number;
  /** ... of which healthy and allowed by policy for this window and length. */
  readonly allowed: number;
  /** ... of which free in the window. */
  readonly free: number;
  readonly reasons: readonly string[];
}

export type PlanResult =
  | { readonly ok: true; readonly nodes: readonly (readonly string[])[] }
  | { readonly ok: false; readonly groups: readonly GroupReport[] };

/**
 * Plans a request for one window: assesses every matching node, then assigns the best fits to all groups at once
 * (all or nothing). On failure, says per group how many nodes matched, were allowed and were free, and why the
 * others were not — the "what was short" a person needs to change the request.
 */
export function planWindow(nodes: readonly NodeView[], groups: readonly GroupSpec[], window: Interval, ctx: AssessContext): PlanResult {
  const demands: { count: number; candidates: Candidate[] }[] = [];
  const reports: GroupReport[] = [];
  groups.forEach((group, index) => {
    const matching = 'node' in group ? [group.node] : nodes.filter((n) => evaluate(group.expr, n));
    const refusals = new Map<string, number>();
    let allowed = 0;
    const candidates: Candidate[] = [];
    for (const node of matching) {
      const refusal: Refusal | null = assessNode(node, window, ctx);
      if (refusal === null || refusal.kind === 'busy') allowed++;
      if (refusal === null) candidates.push(node);
      else refusals.set(refusal.reason, (refusals.get(refusal.reason) ?? 0) + 1);
    }
    demands.push({ count: group.count, candidates });
    reports.push({
      group: index,
      count: group.count,
      where: 'node' in group ? `node ${group.asked}` : group.where,
      matching: matching.length,
      allowed,
      free: candidates.length,
      reasons: summarize(refusals),
    });
  });
  const assignment = assignBestFit(demands);
  if (assignment.ok) return assignment;
  return { ok: false, groups: reports };
}

/** "2 × leased until …" — the most common reasons first, each busy window collapsed into one line. */
function summarize(refusals: ReadonlyMap<string, number>): string[] {
  const busy = [...refusals].filter(([r]) => r.startsWith('leased until'));
  const other = [...refusals].filter(([r]) => !r.startsWith('leased until')).sort((a, b) => b[1] - a[1]);
  const lines = other.map(([reason, n]) => `${n} ${reason}`);
  const busyCount = busy.reduce((sum, [, n]) => sum + n, 0);
  if (busyCount > 0) lines.push(`${busyCount} already leased in the window`);
  return lines;
}

/** A one-paragraph explanation of a failed plan, group by group. */
export function explain(groups: readonly GroupReport[]): string {
  return groups
    .map((g) => {
      const short = g.free < g.count ? ` — short by ${g.count - g.free}` : '';
      const why = g.reasons.length > 0 ? ` (${g.reasons.join('; ')})` : '';
      return `group ${g.group + 1} (${g.count} × ${g.where}): ${g.matching} match, ${g.allowed} allowed, ${g.free} free${short}${why}`;
    })
    .join('; ');
}

/**
 * The earliest start at or after `from` at which the whole request fits: tries `from`, then every instant a
 * blocking lease (plus its cleaning gap) ends and every instant an offer begins, in order — the only instants at
 * which the answer can change from "no" to "yes". Bounded by `maxTries` and `horizon`; null when nothing fits.
 */
export function earliestStart(
  nodes: readonly NodeView[],
  groups: readonly GroupSpec[],
  durationMs: number,
  from: number,
  horizon: number,
  ctx: AssessContext,
  maxTries = 500,
): number | null {
  const instants = new Set<number>([from]);
  for (const held of ctx.heldByNode.values()) for (const h of held) if (h.blockedUntil > from) instants.add(h.blockedUntil);
  for (const offers of ctx.offersByNode.values()) for (const o of offers) if (o.start.getTime() > from) instants.add(o.start.getTime());
  const sorted = [...instants].filter((t) => t <= horizon).sort((a, b) => a - b).slice(0, maxTries);
  for (const start of sorted) {
    if (planWindow(nodes, groups, { start, end: start + durationMs }, ctx).ok) return start;
  }
  return null;
}
