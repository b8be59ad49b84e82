import { knownFacts, type FactType } from '../domain/expression/check.js';
import type { Project } from '../domain/identity.js';
import type { PlanNode } from '../domain/inventory.js';
import { offerAllows, type Offer } from '../domain/leasing.js';
import { compareCostKeys, costKey } from '../domain/scheduling/best-fit.js';
import type { Store } from '../store/store.js';

/**
 * This replica's copy of what planning reads of the inventory: every live node (planning's columns, owner
 * resolved) and every offer in force, with the nodes in best-fit order. Each plan first asks the store for what
 * was written since the last look (Store.planningChanges: one indexed query that returns nothing when nothing
 * changed), so the index is as current as a read of the tables at that moment, on every replica, with no
 * notification to miss. Measured at 10,000 nodes on PostgreSQL: reading the whole inventory per plan cost 185 ms
 * of a 464 ms quote (rows with four jsonb columns, ~30,000 dates parsed, garbage collection); a refresh that finds
 * nothing costs one round trip.
 */
const NONE: readonly Offer[] = [];

export class PlanningIndex {
  private watermark: string | null = null;
  private readonly nodes = new Map<string, PlanNode>();
  private readonly byName = new Map<string, PlanNode>();
  private readonly offers = new Map<string, Map<string, Offer>>();
  /** The same offers as lists, made once per change (planning asks for them once per node per plan). */
  private readonly offerLists = new Map<string, readonly Offer[]>();
  /** Per project: the nodes it may know of, for this version, until an offer among theirs ends. */
  private readonly knownCache = new Map<string, { version: number; until: number; nodes: readonly PlanNode[] }>();
  private sorted: readonly PlanNode[] | null = null;
  /** Bumped by every refresh that changed something: what per-project caches are keyed by. */
  private version = 0;
  private readonly factsCache = new Map<string, { key: string; facts: ReadonlyMap<string, FactType> }>();
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  constructor(private readonly store: Store) {}

  /**
   * Brings the index up to everything committed before this call. A refresh already under way may have read
   * before a change this caller must see, so callers meanwhile share one more refresh queued behind it.
   */
  refresh(): Promise<void> {
    if (this.queued) return this.queued;
    if (!this.running) return (this.running = this.track(this.load()));
    this.queued = this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = null;
        return (this.running = this.track(this.load()));
      });
    return this.queued;
  }

  /** Live nodes, best fit first (domain/scheduling/best-fit.ts: scarcest resource first, then name and id). */
  byCost(): readonly PlanNode[] {
    if (!this.sorted) {
      const keyed = [...this.nodes.values()].map((node) => ({ node, key: costKey(node) }));
      keyed.sort((a, b) => compareCostKeys(a.key, b.key));
      this.sorted = keyed.map((k) => k.node);
    }
    return this.sorted;
  }

  /** A live node by id alone. */
  get(id: string): PlanNode | undefined {
    return this.nodes.get(id);
  }

  /** A live node by id, or by name. */
  find(idOrName: string): PlanNode | undefined {
    return this.nodes.get(idOrName) ?? this.byName.get(idOrName);
  }

  /** The offers in force (not withdrawn) on a node, in no particular order. */
  offersOf(nodeId: string): readonly Offer[] {
    return this.offerLists.get(nodeId) ?? NONE;
  }

  /**
   * The nodes `project` may lease or be told about, best fit first: those it owns, and those with an offer open to
   * it at or after `now` (not over, allowing the project). Kept per project until the index changes or one of the
   * offers that made a node known ends.
   */
  knownTo(project: Pick<Project, 'id'>, now: number): readonly PlanNode[] {
    const cached = this.knownCache.get(project.id);
    if (cached && cached.version === this.version && now < cached.until) return cached.nodes;
    let until = Infinity;
    const nodes = this.byCost().filter((n) => {
      if (n.owner_project?.id === project.id) return true;
      let known = false;
      for (const o of this.offersOf(n.id)) {
        const end = o.end?.getTime() ?? Infinity;
        if (end > now && offerAllows(o, project.id)) {
          known = true;
          until = Math.min(until, end);
        }
      }
      return known;
    });
    if (this.knownCache.size > 1_000) this.knownCache.clear();
    this.knownCache.set(project.id, { version: this.version, until, nodes });
    return nodes;
  }

  /** The facts expressions may name for `project`: those of the nodes it may know of (never the rest's). */
  factsFor(project: Pick<Project, 'id'>, known: readonly PlanNode[]): ReadonlyMap<string, FactType> {
    const key = `${this.version}:${known.length}`;
    const cached = this.factsCache.get(project.id);
    if (cached?.key === key) return cached.facts;
    const facts = knownFacts(known.map((n) => n.facts));
    if (this.factsCache.size > 1_000) this.factsCache.clear();
    this.factsCache.set(project.id, { key, facts });
    return facts;
  }

  private track(run: Promise<void>): Promise<void> {
    const tracked: Promise<void> = run.finally(() => {
      if (this.running === tracked) this.running = null;
    });
    return tracked;
  }

  private async load(): Promise<void> {
    const changes = await this.store.planningChanges(this.watermark);
    if (changes.full) {
      this.nodes.clear();
      this.byName.clear();
      this.offers.clear();
    }
    for (const { node, removed } of changes.nodes) {
      const before = this.nodes.get(node.id);
      if (before?.name) this.byName.delete(before.name);
      if (removed) this.nodes.delete(node.id);
      else {
        this.nodes.set(node.id, node);
        if (node.name) this.byName.set(node.name, node);
      }
    }
    if (changes.full) this.offerLists.clear();
    for (const offer of changes.offers) {
      let offers = this.offers.get(offer.node_id);
      if (offer.withdrawn_at !== null) offers?.delete(offer.id);
      else {
        if (!offers) this.offers.set(offer.node_id, (offers = new Map()));
        offers.set(offer.id, offer);
      }
      if (offers?.size) this.offerLists.set(offer.node_id, [...offers.values()]);
      else {
        this.offers.delete(offer.node_id);
        this.offerLists.delete(offer.node_id);
      }
    }
    if (changes.full || changes.nodes.length > 0 || changes.offers.length > 0) {
      this.version++;
      if (changes.full || changes.nodes.length > 0) this.sorted = null;
    }
    this.watermark = changes.watermark;
  }
}

