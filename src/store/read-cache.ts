/** A read as it was answered, with what it stays right for. */
interface Entry<V> {
  /** The store's write count before the read was made. */
  readonly count: number;
  /** The instants (ms) between which the answer holds if nothing is written: from the read's, up to its next change. */
  readonly from: number;
  readonly until: number;
  readonly value: V;
}

/**
 * Answers of one read, kept while they are certainly still right: no statement that may have changed a row has run
 * since (the embedded store counts them: pglite-dialect.ts), and the clock is still between the instant the answer
 * was read for and the next instant at which it would read differently with the same rows (a lease's start or end,
 * a token's expiry; the read says when). Exact, not a time-to-live: a lease cancelled, shortened or ended, a token
 * revoked, is seen by the very next request. Only for a store whose writes all go through this process.
 *
 * Issue 15: the gateway's token-with-node read was 1.3–1.6 ms of a node GET's +3.5 ms over a 5.9 ms Ironic GET in
 * the `leasehold serve` process (PGlite, the query idle-cold between requests); a repeat is a map lookup.
 */
export class ReadCache<V> {
  private readonly entries = new Map<string, Entry<V>>();

  constructor(
    private readonly writeCount: () => number,
    /** Entries kept at most (all dropped when full: the cache only spares repeats, which refill it at once). */
    private readonly max = 1_000,
  ) {}

  /**
   * The answer for `key` at `now`: kept, or read by `load` (which says until when it holds: ms, Infinity for
   * "until a write"). A null answer is not kept.
   */
  async read(key: string, now: Date, load: () => Promise<{ readonly value: V; readonly until: number } | null>): Promise<V | null> {
    const at = now.getTime();
    const count = this.writeCount();
    const kept = this.entries.get(key);
    if (kept && kept.count === count && kept.from <= at && at < kept.until) return kept.value;
    // Counted before the read: a write landing while it is made leaves the answer already stale, never kept as fresh.
    const loaded = await load();
    if (!loaded) return null;
    if (this.entries.size >= this.max) this.entries.clear();
    this.entries.set(key, { count, from: at, until: loaded.until, value: loaded.value });
    return loaded.value;
  }
}
