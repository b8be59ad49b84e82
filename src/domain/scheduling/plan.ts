import { evaluate } from '../expression/evaluate.js';
import type { Expr } from '../expression/ast.js';
import type { PlanNode } from '../inventory.js';
import { assessNode, type AssessContext, type Refusal } from './assess.js';
import { assignBestFit, type Candidate } from './best-fit.js';
import type { Interval } from './interval.js';

/** One group of a request: `count` nodes matching `expr`, or one named node. */
export type GroupSpec =
  | { readonly count: number; readonly where: string; readonly expr: Expr }
  | { readonly count: 1; readonly node: PlanNode; /** as the caller named it (uuid or name) */ readonly asked: string };

export interface GroupReport {
  /** The group's index in the request, from 0; `group_number` counts from 1, as the messages do. */
  readonly group: number;
  readonly group_number: number;
  readonly count: number;
  readonly where: string;
  /** Nodes whose hardware matches. */
  readonly matching: number;
  /** ... of which healthy and allowed by policy for this window and length. */
  readonly allowed: number;
  /** ... of which free in the window. */
  readonly free: number;
  readonly reasons: readonly string[];
  /** Nodes that match and are allowed but already leased in the window (what other leases took), at most 10. */
  readonly taken: readonly string[];
}

/** Taken nodes named in a refusal: enough to see what others took in a race, short enough for a message. */
const TAKEN_SHOWN = 10;

export type PlanResult =
  | { readonly ok: true; readonly nodes: readonly (readonly string[])[] }
  | { readonly ok: false; readonly groups: readonly GroupReport[] };

/**
 * Plans a request for one window: assesses every matching node, then assigns the best fits to all groups at once
 * (all or nothing). On failure, says per group how many nodes matched, were allowed and were free, and why the
 * others were not — the "what was short" a person needs to change the request.
 */
export function planWindow(nodes: readonly PlanNode[], groups: readonly GroupSpec[], window: Interval, ctx: AssessContext): PlanResult {
  const demands: { count: number; candidates: Candidate[] }[] = [];
  const reports: GroupReport[] = [];
  groups.forEach((group, index) => {
    const matching = 'node' in group ? [group.node] : nodes.filter((n) => evaluate(group.expr, n));
    const refusals = new Map<string, number>();
    let allowed = 0;
    const candidates: Candidate[] = [];
    const taken: string[] = [];
    for (const node of matching) {
      const refusal: Refusal | null = assessNode(node, window, ctx);
      if (refusal === null || refusal.kind === 'busy') allowed++;
      if (refusal?.kind === 'busy' && taken.length < TAKEN_SHOWN) taken.push(node.name ?? node.id);
      if (refusal === null) candidates.push(node);
      else refusals.set(refusal.reason, (refusals.get(refusal.reason) ?? 0) + 1);
    }
    demands.push({ count: group.count, candidates });
    reports.push({
      group: index,
      group_number: index + 1,
      count: group.count,
      where: 'node' in group ? `node ${group.asked}` : group.where,
      matching: matching.length,
      allowed,
      free: candidates.length,
      reasons: summarize(refusals),
      taken,
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
