import type { Clock } from '../domain/clock.js';
import { InvalidRequestError, LeaseConflictError, LeaseUnavailableError, PolicyViolationError } from '../domain/errors.js';
import { compileRequirement } from '../domain/expression/compile.js';
import { evaluate } from '../domain/expression/evaluate.js';
import type { Project } from '../domain/identity.js';
import type { NodeView } from '../domain/inventory.js';
import { offerAllows, type Lease, type Offer } from '../domain/leasing.js';
import { assessNode, type AssessContext, type Held } from '../domain/scheduling/assess.js';
import { extensionRefusal, latestEnd } from '../domain/scheduling/extension.js';
import { earliestStart, explain, planWindow, type GroupSpec } from '../domain/scheduling/plan.js';
import { checkQuota } from '../domain/scheduling/quota.js';
import type { Store } from '../store/store.js';

/** A lease request as the API received it (validated for shape, not yet for meaning). */
export interface LeaseAsk {
  readonly start?: Date;
  readonly end?: Date;
  readonly durationMs?: number;
  readonly nodes?: readonly string[];
  readonly groups?: readonly { readonly count: number; readonly where: string }[];
}

export interface LeasePlan {
  readonly start: Date;
  readonly end: Date;
  readonly allocations: readonly { readonly node_id: string; readonly group_index: number }[];
  readonly nodes: ReadonlyMap<string, NodeView>;
}

export interface PlannerOptions {
  readonly cleaningGapMs: number;
  /** How far ahead the earliest-start search looks (default 365 days). */
  readonly horizonMs?: number;
}

/** A start a little in the past (clock skew, a slow client) means "now". */
const START_SKEW_MS = 60_000;
const DEFAULT_HORIZON_MS = 365 * 86_400_000;

/**
 * Turns a request into allocations: loads the inventory, the offers and the bookings that matter, and runs the
 * pure planner (domain/scheduling). Read-only: creating the lease is the store's transaction, where the exclusion
 * constraint has the last word if two requests race for one node.
 */
export class LeasePlanner {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly options: PlannerOptions,
  ) {}

  async plan(project: Project, ask: LeaseAsk): Promise<LeasePlan> {
    const now = this.clock.now().getTime();
    const { start, end } = this.window(ask, now);
    const duration = end - start;
    const requested = (ask.nodes?.length ?? 0) + (ask.groups ?? []).reduce((sum, g) => sum + g.count, 0);
    // The same rule as create's final check in the store, so a quote never says yes where create says no.
    const held = project.quota.max_nodes == null ? [] : await this.store.leasing.heldWindows(project.id, new Date(start), new Date(end));
    checkQuota(project.quota, { projectName: project.name, window: { start, end }, nodes: requested, held });

    // Only what the project may see: its own nodes and those offered to it. A refusal's counts ("9 match, 9
    // allowed") and the facts an expression may name never reveal the rest of the inventory.
    const nodes = await this.leasableNodes(project, new Date(now));
    const groups = this.groups(ask, nodes);
    const candidateIds = [...new Set(groups.flatMap((g) => ('node' in g ? [g.node] : nodes.filter((n) => matches(g, n))).map((n) => n.id)))];
    const from = Math.min(now, start);
    const [offers, bookings] = await Promise.all([
      this.store.leasing.offersInForce(candidateIds, new Date(start), new Date(end)),
      this.store.leasing.bookings(candidateIds, new Date(from), new Date(end + this.options.cleaningGapMs)),
    ]);
    hideUnoffered(groups, project, offers);
    const ctx = context(project, now, this.options.cleaningGapMs, offers, bookings);
    const result = planWindow(nodes, groups, { start, end }, ctx);
    if (result.ok) {
      const allocations = result.nodes.flatMap((ids, group_index) => ids.map((node_id) => ({ node_id, group_index })));
      return { start: new Date(start), end: new Date(end), allocations, nodes: new Map(nodes.map((n) => [n.id, n])) };
    }

    const horizon = start + (this.options.horizonMs ?? DEFAULT_HORIZON_MS);
    const [laterOffers, laterBookings] = await Promise.all([
      this.store.leasing.offersInForce(candidateIds, new Date(start), new Date(horizon + duration)),
      this.store.leasing.bookings(candidateIds, new Date(from), new Date(horizon + duration + this.options.cleaningGapMs)),
    ]);
    const wide = context(project, now, this.options.cleaningGapMs, laterOffers, laterBookings);
    const earliest = earliestStart(nodes, groups, duration, start, horizon, wide);
    const when = earliest === null ? 'no start within the next year fits' : `earliest start: ${new Date(earliest).toISOString()}`;
    throw new LeaseUnavailableError(`the request cannot be met from ${new Date(start).toISOString()}: ${explain(result.groups)}; ${when}`, {
      details: { earliest_start: earliest === null ? null : new Date(earliest).toISOString(), groups: result.groups },
    });
  }

  /**
   * Checks that `lease` may run until `end` on the same nodes: the quota, every node's offer policy for the longer
   * window, its health, and that the extra time is free (the exclusion constraint re-checks that on write).
   */
  async checkExtension(project: Project, lease: Lease, end: Date): Promise<void> {
    const window = { start: lease.start.getTime(), end: end.getTime() };
    const ids = lease.allocations.filter((a) => a.state !== 'cancelled').map((a) => a.node_id);
    const held = project.quota.max_nodes == null ? [] : await this.store.leasing.heldWindows(project.id, lease.start, end, lease.id);
    checkQuota(project.quota, { projectName: project.name, window, nodes: ids.length, held });
    const found = await Promise.all(ids.map((id) => this.store.getNode(id, { kind: 'all' })));
    const nodes = found.filter((n): n is NodeView => n !== null);
    const now = this.clock.now().getTime();
    const [offers, bookings] = await Promise.all([
      this.store.leasing.offersInForce(ids, lease.start, end),
      this.store.leasing.bookings(ids, new Date(now), new Date(window.end + this.options.cleaningGapMs)),
    ]);
    const others = bookings.filter((b) => b.lease_id !== lease.id);
    const ctx = { ...context(project, now, this.options.cleaningGapMs, offers, others), inUse: new Set(ids) };
    for (const node of nodes) {
      const refusal = assessNode(node, window, ctx);
      if (refusal === null) continue;
      const latest = Math.min(...nodes.map((n) => latestEnd(n, window.start, ctx)));
      const message = extensionRefusal(node.name ?? node.id, end, refusal, latest);
      const latestEndIso = Number.isFinite(latest) && latest > lease.end.getTime() ? new Date(latest).toISOString() : null;
      const details = { node_id: node.id, reason: refusal.reason, latest_end: latestEndIso, earliest_start: null };
      if (refusal.kind === 'policy') throw new PolicyViolationError(message, { details });
      if (refusal.kind === 'busy') throw new LeaseConflictError(message, { details });
      throw new LeaseUnavailableError(message, { details });
    }
  }

  /** The nodes a project may lease or see in a refusal: those it owns, and those with an offer open to it. */
  private async leasableNodes(project: Project, now: Date): Promise<NodeView[]> {
    const [all, offered] = await Promise.all([this.store.allNodes(), this.store.leasing.offeredNodeIds(project.id, now)]);
    const open = new Set(offered);
    return all.filter((n) => n.owner_project?.id === project.id || open.has(n.id));
  }

  private window(ask: LeaseAsk, now: number): { start: number; end: number } {
    let start = ask.start?.getTime() ?? now;
    if (start < now - START_SKEW_MS) {
      throw new InvalidRequestError(`start ${new Date(start).toISOString()} is in the past`, { details: { field: 'start' } });
    }
    start = Math.max(start, now);
    if (ask.end !== undefined && ask.durationMs !== undefined) {
      throw new InvalidRequestError('give either end or duration, not both', { details: { field: 'end' } });
    }
    const end = ask.end?.getTime() ?? (ask.durationMs === undefined ? undefined : start + ask.durationMs);
    if (end === undefined) throw new InvalidRequestError('give end or duration (e.g. "3d")', { details: { field: 'duration' } });
    if (end <= start) throw new InvalidRequestError('the lease must end after it starts', { details: { field: 'end' } });
    return { start, end };
  }

  private groups(ask: LeaseAsk, nodes: readonly NodeView[]): GroupSpec[] {
    const specs: GroupSpec[] = [];
    const facts = nodes.map((n) => n.facts);
    (ask.groups ?? []).forEach((g, i) => {
      const expr = compileRequirement(g.where, facts, { name: `groups.${i}.where`, label: `groups[${i}].where` });
      specs.push({ count: g.count, where: g.where, expr });
    });
    const byKey = new Map<string, NodeView>();
    for (const n of nodes) {
      byKey.set(n.id, n);
      if (n.name) byKey.set(n.name, n);
    }
    for (const key of ask.nodes ?? []) {
      const node = byKey.get(key);
      // A node the project neither owns nor could be offered is reported like one that does not exist.
      if (!node) {
        throw new InvalidRequestError(`nodes: no node ${JSON.stringify(key)} is known to you`, { details: { field: 'nodes', node: key } });
      }
      if (specs.some((s) => 'node' in s && s.node.id === node.id)) {
        throw new InvalidRequestError(`nodes: ${JSON.stringify(key)} is named twice`, { details: { field: 'nodes', node: key } });
      }
      specs.push({ count: 1, node, asked: key });
    }
    if (specs.length === 0) {
      throw new InvalidRequestError('name nodes or give requirement groups', { details: { field: 'groups' } });
    }
    return specs;
  }
}

function matches(group: GroupSpec, node: NodeView): boolean {
  return !('node' in group) && evaluate(group.expr, node);
}

function context(
  project: Project,
  now: number,
  gapMs: number,
  offers: readonly Offer[],
  bookings: readonly { node_id: string; start: Date; blocked_until: Date }[],
): AssessContext {
  const offersByNode = new Map<string, Offer[]>();
  for (const o of offers) offersByNode.set(o.node_id, [...(offersByNode.get(o.node_id) ?? []), o]);
  const heldByNode = new Map<string, Held[]>();
  for (const b of bookings) {
    const list = heldByNode.get(b.node_id) ?? [];
    list.push({ node_id: b.node_id, start: b.start.getTime(), blockedUntil: b.blocked_until.getTime() });
    heldByNode.set(b.node_id, list);
  }
  return { project: { id: project.id, name: project.name }, now, gapMs, offersByNode, heldByNode };
}

/** A named node the project neither owns nor is offered is answered like one that does not exist (no leak). */
function hideUnoffered(groups: readonly GroupSpec[], project: Project, offers: readonly Offer[]): void {
  for (const g of groups) {
    if (!('node' in g) || g.node.owner_project?.id === project.id) continue;
    const offered = offers.some((o) => o.node_id === g.node.id && offerAllows(o, project.id));
    if (!offered) {
      throw new InvalidRequestError(`nodes: no node ${JSON.stringify(g.asked)} is known to you`, {
        details: { field: 'nodes', node: g.asked },
      });
    }
  }
}
