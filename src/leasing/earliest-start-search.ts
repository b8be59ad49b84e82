import { evaluate } from '../domain/expression/evaluate.js';
import type { PlanNode } from '../domain/inventory.js';
import type { AssessContext } from '../domain/scheduling/assess.js';
import { earliestFeasibleStart, intersectStarts, offerStarts, type StartGroup } from '../domain/scheduling/earliest-start.js';
import type { GroupSpec } from '../domain/scheduling/plan.js';
import type { LeasingStore } from '../store/leasing-store.js';

export interface EarliestStartAsk {
  readonly groups: readonly GroupSpec[];
  /** The nodes the project may know of, best fit first. */
  readonly known: readonly PlanNode[];
  /** The plan's context (its holds may cover only some nodes; the others' are read here). */
  readonly ctx: AssessContext;
  readonly durationMs: number;
  readonly from: number;
  readonly horizon: number;
}

const DAY_MS = 86_400_000;

/**
 * The earliest start at or after `from` (up to `horizon`) at which the whole request fits: per node, where its
 * owner's offers let the project start (in memory) intersected with where its bookings leave room (the store's
 * `freeStarts`, gaps between held windows computed by the database), then one sweep over those instants
 * (domain/scheduling/earliest-start.ts). The horizon is searched in stretches, a week (or four lease lengths)
 * first, each twice the last, so a request that fits soon reads only the bookings of the next days.
 */
export async function searchEarliestStart(leasing: Pick<LeasingStore, 'freeStarts' | 'holds'>, ask: EarliestStartAsk): Promise<number | null> {
  const { ctx, durationMs } = ask;
  // Health does not change with the window: maintenance and quarantine rule a node out; a node in an unexpected
  // provision state does unless it is in use right now (then the state is its lease's).
  const unsure = ask.known.filter((n) => n.provision_state !== 'available' && !ctx.heldByNode.has(n.id));
  const busyNow = new Set<string>();
  for (const [id, held] of ctx.heldByNode) if (held.some((h) => h.start <= ctx.now && ctx.now < h.blockedUntil)) busyNow.add(id);
  const nowHolds = await leasing.holds(unsure.map((n) => n.id), new Date(ctx.now), new Date(ctx.now + 1));
  for (const h of nowHolds) if (h.start.getTime() <= ctx.now) busyNow.add(h.node_id);
  const healthy = (n: PlanNode) => !n.maintenance && !n.quarantined_at && (n.provision_state === 'available' || busyNow.has(n.id));

  const policy = new Map<string, ReturnType<typeof offerStarts>>();
  const candidates = ask.groups.map((g) => {
    const nodes = 'node' in g ? [g.node] : ask.known.filter((n) => evaluate(g.expr, n));
    return nodes.filter((n) => {
      if (!healthy(n)) return false;
      if (!policy.has(n.id)) {
        const starts = offerStarts(ctx.offersByNode.get(n.id) ?? [], ctx.project.id, durationMs, n.owner_project?.id === ctx.project.id, { start: ask.from, end: ask.horizon });
        policy.set(n.id, intersectStarts(starts, [{ start: ask.from, end: ask.horizon }]));
      }
      return policy.get(n.id)!.length > 0;
    });
  });
  if (candidates.some((c, i) => c.length < ask.groups[i]!.count)) return null;
  const ids = [...new Set(candidates.flat().map((n) => n.id))];

  let stretch = Math.max(7 * DAY_MS, 4 * durationMs);
  for (let from = ask.from; from <= ask.horizon; from += stretch + 1, stretch *= 2) {
    const to = Math.min(ask.horizon, from + stretch);
    const free = new Map((await leasing.freeStarts(ids, new Date(from), new Date(to), durationMs + ctx.gapMs)).map((f) => [f.node_id, f.starts]));
    const groups: StartGroup[] = ask.groups.map((g, i) => ({
      count: g.count,
      candidates: candidates[i]!.map((n) => ({ id: n.id, starts: intersectStarts(free.get(n.id) ?? [], policy.get(n.id)!) })),
    }));
    const found = earliestFeasibleStart(groups, from, to);
    if (found !== null) return found;
  }
  return null;
}
