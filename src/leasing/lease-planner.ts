import type { Clock } from '../domain/clock.js';
import { InvalidRequestError, LeaseConflictError, LeaseUnavailableError, PolicyViolationError } from '../domain/errors.js';
import { compileAgainst } from '../domain/expression/compile.js';
import { compilePredicate } from '../domain/expression/evaluate.js';
import type { Project } from '../domain/identity.js';
import type { NodeView, PlanNode } from '../domain/inventory.js';
import { offerAllows, type Lease, type Offer } from '../domain/leasing.js';
import { assessNode, mayServe, type AssessContext, type Held } from '../domain/scheduling/assess.js';
import { extensionRefusal, latestEnd } from '../domain/scheduling/extension.js';
import { extensionRuleMessage, leaseExtensionLimit, type ExtensionLimit } from '../domain/scheduling/extension-policy.js';
import { explain, planWindow, type GroupSpec } from '../domain/scheduling/plan.js';
import { checkQuota, quotaSpan } from '../domain/scheduling/quota.js';
import type { Hold } from '../store/leasing-store.js';
import type { Store } from '../store/store.js';
import { BatchedPlanningReads } from './batched-planning-reads.js';
import { searchEarliestStart } from './earliest-start-search.js';
import { WaitForPendingBookings, type PendingBookings, type PendingHold } from './pending-bookings.js';
import { PlanningIndex } from './planning-index.js';

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
  readonly nodes: ReadonlyMap<string, PlanNode>;
  /**
   * Per group (by index), the nodes that could serve it, best first (the chosen ones included): what the booking
   * transaction takes replacements from when a chosen node was taken meanwhile by a concurrent request.
   */
  readonly alternatives: readonly (readonly string[])[];
  /** Planned for a booking: what it holds in this process until its transaction ends (release it then). */
  readonly hold?: PendingHold;
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
 * How many of a group's best candidates are checked against the bookings first: count × 4 + 8, then four times
 * as many each time that is not enough. At the seed request over 10,000 nodes and 100,000 leases about one
 * candidate in five is free for 3 days, so the first look almost always suffices: 20 and 12 nodes' bookings
 * instead of 7,238 nodes'.
 */
const FIRST_LOOK = (count: number) => count * 4 + 8;
const WIDEN = 4;
/** Alternatives handed to the booking per group: enough to replace what concurrent requests take meanwhile. */
const ALTERNATIVES = (count: number) => count * 8 + 16;

/**
 * Turns a request into allocations: the best-fit candidates from this replica's planning index (refreshed first,
 * so it is as current as the tables), the bookings of the best few from the store, and the pure planner
 * (domain/scheduling). Read-only: creating the lease is the store's transaction, where the exclusion constraint
 * has the last word if two requests race for one node.
 */
export class LeasePlanner {
  readonly index: PlanningIndex;
  /** The holds and free starts plans read, shared by the plans that read them in the same turn. */
  private readonly reads: BatchedPlanningReads;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly options: PlannerOptions,
  ) {
    this.index = new PlanningIndex(store);
    this.reads = new BatchedPlanningReads(store.leasing);
  }

  /**
   * Plans `ask` for `project`. With `pending` (a booking, not a quote), nodes other bookings of this process are
   * taking count as held, the plan holds its own choice there until released, and a request that could only be met
   * by nodes under booking fails with WaitForPendingBookings instead of a refusal.
   */
  async plan(project: Project, ask: LeaseAsk, pending?: PendingBookings): Promise<LeasePlan> {
    const now = this.clock.now().getTime();
    const { start, end } = this.window(ask, now);
    const requested = (ask.nodes?.length ?? 0) + (ask.groups ?? []).reduce((sum, g) => sum + g.count, 0);
    // The same rule as create's final check in the store, so a quote never says yes where create says no.
    const [held] = await Promise.all([
      this.heldFor(project, { start, end }),
      this.index.refresh(),
    ]);
    checkQuota(project.quota, { projectName: project.name, window: { start, end }, nodes: requested, held });

    // Only what the project may see: its own nodes and those offered to it. A refusal's counts ("9 match, 9
    // allowed") and the facts an expression may name never reveal the rest of the inventory.
    const known = this.index.knownTo(project, now);
    const groups = this.groups(ask, known, project);
    const window = { start, end };
    hideUnoffered(groups, project, window, (id) => this.index.offersOf(id));
    const holds = new Map<string, Held[]>();
    const ctx: AssessContext = {
      project: { id: project.id, name: project.name },
      now,
      gapMs: this.options.cleaningGapMs,
      offersByNode: { get: (id) => this.index.offersOf(id) },
      heldByNode: holds,
    };
    // Per group, the nodes that may serve it as far as the index tells (hardware, health, policy), best first:
    // walked only as far as the looks below need (FIRST_LOOK, then widened).
    const ranked = groups.map((g) => {
      if ('node' in g) return new Ranked([g.node], () => true);
      const matches = compilePredicate(g.expr);
      return new Ranked(known, (n) => matches(n) && mayServe(n, window, ctx));
    });
    const from = Math.min(now, start);
    const fetch = async (ids: readonly string[]) => {
      const missing = ids.filter((id) => !holds.has(id));
      for (const id of missing) holds.set(id, []);
      for (const h of await this.reads.holds(missing, new Date(from), new Date(end + this.options.cleaningGapMs))) {
        holds.get(h.node_id)!.push(toHeld(h));
      }
    };
    for (let look = 1; ; look *= WIDEN) {
      const subset = ranked.map((r, i) => r.take(FIRST_LOOK(groups[i]!.count) * look));
      await fetch([...new Set(subset.flat().map((n) => n.id))]);
      // From here to the return nothing awaits: what other bookings hold is read, and this one's choice held, at once.
      const seen = pending && !pending.idle ? withPending(ctx, holds, pending) : ctx;
      const result = planWindow(unique(subset.flat()), groups, window, seen);
      if (result.ok) {
        const allocations = result.nodes.flatMap((ids, group_index) => ids.map((node_id) => ({ node_id, group_index })));
        const alternatives = ranked.map((r, i) => alternativesOf(r.take(ALTERNATIVES(groups[i]!.count) * 2), result.nodes[i]!, groups[i]!.count, seen, window));
        const nodes = new Map(allocations.map((a) => [a.node_id, this.index.find(a.node_id)!]));
        const hold = pending?.hold(allocations.map((a) => a.node_id), start, end + this.options.cleaningGapMs);
        return { start: new Date(start), end: new Date(end), allocations, nodes, alternatives, ...(hold ? { hold } : {}) };
      }
      if (ranked.every((r, i) => r.done && subset[i]!.length === r.size)) break;
    }
    // Candidates other bookings are taking right now: whether they are left over is known once those end.
    const settled = pending?.settledOn(holds.keys(), start, end + this.options.cleaningGapMs);
    if (settled) throw new WaitForPendingBookings(settled);

    // Refused: the report over every node the project may know of (the ones not ranked were refused on health or
    // policy, which needs no bookings), then the earliest start that fits.
    const report = planWindow(known, groups, window, ctx);
    if (report.ok) throw new Error('planner: the full report found a plan the candidates did not');
    const earliest = await searchEarliestStart(this.reads, {
      groups,
      known,
      ctx,
      durationMs: end - start,
      from: start,
      horizon: start + (this.options.horizonMs ?? DEFAULT_HORIZON_MS),
    });
    const when = earliest === null ? 'no start within the next year fits' : `earliest start: ${new Date(earliest).toISOString()}`;
    throw new LeaseUnavailableError(`the request cannot be met from ${new Date(start).toISOString()}: ${explain(report.groups)}; ${when}`, {
      details: { earliest_start: earliest === null ? null : new Date(earliest).toISOString(), groups: report.groups },
    });
  }

  /**
   * Checks that `lease` may run until `end` on the same nodes: the quota, every node's offer policy for the longer
   * window, its health, and that the extra time is free (the exclusion constraint re-checks that on write).
   */
  /** What the project already holds, as far as its quota needs it (quotaSpan), other than `exceptLeaseId`'s. */
  private async heldFor(project: Project, window: { readonly start: number; readonly end: number }, exceptLeaseId?: string) {
    const span = quotaSpan(project.quota, window);
    return span === null ? [] : this.store.leasing.heldWindows(project.id, new Date(span.start), new Date(span.end), exceptLeaseId);
  }

  async checkExtension(project: Project, lease: Lease, end: Date): Promise<void> {
    const window = { start: lease.start.getTime(), end: end.getTime() };
    const ids = lease.allocations.filter((a) => a.state !== 'cancelled').map((a) => a.node_id);
    const held = await this.heldFor(project, window, lease.id);
    checkQuota(project.quota, { projectName: project.name, window, nodes: ids.length, held });
    const found = await Promise.all(ids.map((id) => this.store.getNode(id, { kind: 'all' })));
    const nodes = found.filter((n): n is NodeView => n !== null);
    const now = this.clock.now().getTime();
    const [offers, bookings] = await Promise.all([
      this.store.leasing.offersInForce(ids, lease.start, end),
      this.store.leasing.bookings(ids, new Date(now), new Date(window.end + this.options.cleaningGapMs)),
    ]);
    const others = bookings.filter((b) => b.lease_id !== lease.id);
    const ctx = { ...context(project, now, this.options.cleaningGapMs, offers, others), inUse: new Set(ids), extending: true };
    // The offers' time rules of extending (issue 16): refused naming the rule, before the rules of any booking.
    const limit = this.limitOf(project, lease, nodes, ctx, now);
    if (end.getTime() > limit.latest && (limit.rule === 'extension_window' || limit.rule === 'extension_max_ahead' || limit.rule === 'max_total_length')) {
      const offer = offers.find((o) => o.node_id === limit.node_id);
      throw new PolicyViolationError(extensionRuleMessage(limit, end, offer), {
        details: {
          rule: limit.rule,
          node_id: limit.node_id,
          latest_end: limit.latest > lease.end.getTime() ? new Date(limit.latest).toISOString() : null,
          window_opens_at: limit.window_opens_at === null ? null : new Date(limit.window_opens_at).toISOString(),
        },
      });
    }
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

  /**
   * How far `lease` could be extended now (GET /v1/leases/{id}/extension, auto-renew): every rule of its nodes'
   * offers, the next booking on each, the project's quota; with the offers, for messages.
   */
  async extensionLimit(project: Project, lease: Lease): Promise<{ readonly limit: ExtensionLimit; readonly offers: readonly Offer[] }> {
    const ids = lease.allocations.filter((a) => a.state !== 'cancelled' && a.leave_reason === null).map((a) => a.node_id);
    const found = await Promise.all(ids.map((id) => this.store.getNode(id, { kind: 'all' })));
    const nodes = found.filter((n): n is NodeView => n !== null);
    const now = this.clock.now().getTime();
    const [offers, bookings] = await Promise.all([
      this.store.leasing.offersInForce(ids, lease.start, null),
      this.store.leasing.bookings(ids, lease.end, null),
    ]);
    const ctx = context(project, now, this.options.cleaningGapMs, offers, bookings.filter((b) => b.lease_id !== lease.id));
    return { limit: this.limitOf(project, lease, nodes, ctx, now), offers };
  }

  private limitOf(project: Project, lease: Lease, nodes: readonly NodeView[], ctx: AssessContext, now: number): ExtensionLimit {
    return leaseExtensionLimit({
      lease,
      projectId: project.id,
      nodes: nodes.map((n) => ({ id: n.id, owned: n.owner_project?.id === project.id })),
      offersByNode: ctx.offersByNode as ReadonlyMap<string, readonly Offer[]>,
      heldByNode: ctx.heldByNode,
      gapMs: ctx.gapMs,
      projectMaxLeaseMs: project.quota.max_lease_duration_ms ?? null,
      now,
    });
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

  private groups(ask: LeaseAsk, nodes: readonly PlanNode[], project: Project): GroupSpec[] {
    const specs: GroupSpec[] = [];
    const facts = this.index.factsFor(project, nodes);
    (ask.groups ?? []).forEach((g, i) => {
      const expr = compileAgainst(g.where, facts, { name: `groups.${i}.where`, label: `groups[${i}].where` });
      specs.push({ count: g.count, where: g.where, expr });
    });
    const known = ask.nodes?.length ? new Set(nodes) : null;
    for (const key of ask.nodes ?? []) {
      const found = this.index.find(key);
      const node = found && known?.has(found) ? found : undefined;
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

function context(
  project: Project,
  now: number,
  gapMs: number,
  offers: readonly Offer[],
  bookings: readonly { node_id: string; start: Date; blocked_until: Date; sub?: boolean }[],
): AssessContext {
  const offersByNode = new Map<string, Offer[]>();
  for (const o of offers) offersByNode.set(o.node_id, [...(offersByNode.get(o.node_id) ?? []), o]);
  const heldByNode = new Map<string, Held[]>();
  for (const b of bookings) {
    const list = heldByNode.get(b.node_id) ?? [];
    list.push({ node_id: b.node_id, start: b.start.getTime(), blockedUntil: b.blocked_until.getTime(), sub: b.sub === true });
    heldByNode.set(b.node_id, list);
  }
  return { project: { id: project.id, name: project.name }, now, gapMs, offersByNode, heldByNode };
}

/** A named node the project neither owns nor is offered is answered like one that does not exist (no leak). */
function hideUnoffered(
  groups: readonly GroupSpec[],
  project: Project,
  window: { readonly start: number; readonly end: number },
  offersOf: (nodeId: string) => readonly Offer[],
): void {
  for (const g of groups) {
    if (!('node' in g) || g.node.owner_project?.id === project.id) continue;
    const inWindow = (o: Offer) => o.start.getTime() < window.end && (o.end === null || o.end.getTime() > window.start);
    const offered = offersOf(g.node.id).some((o) => inWindow(o) && offerAllows(o, project.id));
    if (!offered) {
      throw new InvalidRequestError(`nodes: no node ${JSON.stringify(g.asked)} is known to you`, {
        details: { field: 'nodes', node: g.asked },
      });
    }
  }
}

/** A group's candidates, best first, found by walking the cost-ordered nodes only as far as asked. */
class Ranked {
  private readonly found: PlanNode[] = [];
  private next = 0;

  constructor(
    private readonly nodes: readonly PlanNode[],
    private readonly admits: (node: PlanNode) => boolean,
  ) {}

  /** Candidates found so far. */
  get size(): number {
    return this.found.length;
  }

  /** Whether every node has been looked at. */
  get done(): boolean {
    return this.next >= this.nodes.length;
  }

  /** The first `count` candidates (fewer when there are no more). */
  take(count: number): readonly PlanNode[] {
    while (this.found.length < count && this.next < this.nodes.length) {
      const node = this.nodes[this.next++]!;
      if (this.admits(node)) this.found.push(node);
    }
    return this.found.slice(0, count);
  }
}

/** `ctx` with the windows that bookings under way hold on the nodes whose holds were read added to theirs. */
function withPending(ctx: AssessContext, holds: ReadonlyMap<string, readonly Held[]>, pending: PendingBookings): AssessContext {
  const merged = new Map<string, readonly Held[]>();
  for (const [id, held] of holds) {
    const under = pending.heldOn(id);
    merged.set(id, under.length === 0 ? held : [...held, ...under]);
  }
  return { ...ctx, heldByNode: merged };
}

function toHeld(h: Pick<Hold, 'node_id' | 'start' | 'blocked_until' | 'sub'>): Held {
  return { node_id: h.node_id, start: h.start.getTime(), blockedUntil: h.blocked_until.getTime(), sub: h.sub === true };
}

function unique(nodes: readonly PlanNode[]): PlanNode[] {
  return [...new Map(nodes.map((n) => [n.id, n])).values()];
}

/**
 * The chosen nodes of a group, then the next best that were free when planned (as many as ALTERNATIVES), then
 * the next best not yet checked: the booking locks what it can of these, best first.
 */
function alternativesOf(ranked: readonly PlanNode[], chosen: readonly string[], count: number, ctx: AssessContext, window: { start: number; end: number }): string[] {
  const out = [...chosen];
  const taken = new Set(chosen);
  for (const n of ranked) {
    if (out.length >= ALTERNATIVES(count)) break;
    if (taken.has(n.id)) continue;
    const checked = ctx.heldByNode.has(n.id);
    if (!checked || assessNode(n, window, ctx) === null) out.push(n.id);
  }
  return out;
}
