import type { Store } from '../store/store.js';

/** What changed since a copy's last look (NodeChangeTracker.look). */
export interface NodeChanges {
  /** Everything counts as changed (the first look): drop every entry. */
  readonly full: boolean;
  readonly nodeIds: readonly string[];
  readonly projectIds: readonly string[];
  /** The copy's epoch after this look: a read started under another epoch must not be kept. */
  readonly epoch: number;
}

/**
 * The look for changes a per-replica copy of per-node answers makes before it answers (Store.leaseInForceChanges:
 * the nodes whose allocations, leases or row were written, and the projects renamed, since the watermark it
 * returned last; one indexed query that returns its watermark alone when nothing changed). Keeps the watermark and
 * an epoch bumped by every look that found something: an entry read by a caller is kept only if the epoch has not
 * moved since that caller's look, or a read begun before a change could land after the change was forgotten.
 */
export class NodeChangeTracker {
  private watermark: string | null = null;
  private current = 0;

  constructor(private readonly store: Pick<Store, 'leaseInForceChanges'>) {}

  get epoch(): number {
    return this.current;
  }

  async look(): Promise<NodeChanges> {
    const changes = await this.store.leaseInForceChanges(this.watermark);
    if (changes.full || changes.nodeIds.length > 0 || changes.projectIds.length > 0) this.current++;
    // A look that finishes after a later one may set an older watermark: it only reads more next time.
    this.watermark = changes.watermark;
    return { full: changes.full, nodeIds: changes.nodeIds, projectIds: changes.projectIds, epoch: this.current };
  }
}
