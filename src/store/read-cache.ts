/** Reads the answer for an instant, with the next instant (ms) it would read differently with the same rows. */
export type CachedLoad<V> = (now: Date) => Promise<{ readonly value: V; readonly until: number } | null>;

/** A read as it was answered, with what it stays right for. */
interface Entry<V> {
  /** The store's write count before the read was made. */
  readonly count: number;
  /** The instants (ms) between which the answer holds if nothing is written: from the read's, up to its next change. */
  readonly from: number;
  readonly until: number;
  readonly value: V;
  /** How to read it again (a refresh after a write). */
  readonly load: CachedLoad<V>;
  /** When a request last asked for it (monotonic ms). */
  usedAt: number;
}

export interface ReadCacheOptions {
  /** Entries kept at most (all dropped when full: the cache only spares repeats, which refill it at once). */
  readonly max?: number;
  /**
   * Read again, after a write, the answers requests asked for lately, while the store has nothing else to do
   * (`idle`), so the next request finds them kept. None: a write leaves them to be read by the next request.
   */
  readonly refresh?: { readonly idle: () => boolean };
  /** Monotonic milliseconds (tests). */
  readonly monotonic?: () => number;
}

/** A refresh starts this long after the write that called for it: a transaction's writes come as one. */
const REFRESH_DELAY_MS = 5;
/** Answers asked for within this long are read again after a write; older ones wait for their next request. */
const RECENT_MS = 10_000;
/** At most this many answers are read again per write, the latest asked for first. */
const REFRESH_MAX = 8;

/**
 * Answers of one read, kept while they are certainly still right: no statement that may have changed a row has run
 * since (the embedded store counts them: pglite-dialect.ts), and the clock is still between the instant the answer
 * was read for and the next instant at which it would read differently with the same rows (a lease's start or end,
 * a token's expiry; the read says when). Exact, not a time-to-live: a lease cancelled, shortened or ended, a token
 * revoked, is seen by the very next request. Only for a store whose writes all go through this process.
 *
 * Issue 15: the gateway's token-with-node read was 1.3–1.6 ms of a node GET's +3.5 ms over a 5.9 ms Ironic GET in
 * the `leasehold serve` process (PGlite, the query idle-cold between requests); a repeat is a map lookup. A power
 * PUT found nothing kept: the node's new power state, recorded 200 ms after each PUT, is a write. So after a write
 * the answers asked for lately are read again while the store is idle (`refresh`), by the same rule: counted before
 * the read, for the instant it is made at (the last request's instant plus the time since).
 */
export class ReadCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly max: number;
  private readonly monotonic: () => number;
  /** The last request's instant (ms) and the monotonic time it came at: "now" for a refresh. */
  private lastAt = 0;
  private lastMonotonic = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly writeCount: () => number,
    private readonly options: ReadCacheOptions = {},
  ) {
    this.max = options.max ?? 1_000;
    this.monotonic = options.monotonic ?? (() => performance.now());
  }

  /**
   * The answer for `key` at `now`: kept, or read by `load` (which says until when it holds: ms, Infinity for
   * "until a write"). A null answer is not kept.
   */
  async read(key: string, now: Date, load: CachedLoad<V>): Promise<V | null> {
    const at = now.getTime();
    const used = this.monotonic();
    this.lastAt = at;
    this.lastMonotonic = used;
    const count = this.writeCount();
    const kept = this.entries.get(key);
    if (kept && kept.count === count && kept.from <= at && at < kept.until) {
      kept.usedAt = used;
      return kept.value;
    }
    // Counted before the read: a write landing while it is made leaves the answer already stale, never kept as fresh.
    const loaded = await load(now);
    if (!loaded) return null;
    if (this.entries.size >= this.max) this.entries.clear();
    this.entries.set(key, { count, from: at, until: loaded.until, value: loaded.value, load, usedAt: used });
    return loaded.value;
  }

  /** Told after a statement that may have written: with `refresh`, the answers asked for lately are read again. */
  written(): void {
    if (!this.options.refresh || this.timer) return;
    this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.refresh();
    }, REFRESH_DELAY_MS);
    this.timer.unref?.();
  }

  /** One at a time, and only while the store is idle: a refresh never makes a request wait. */
  private async refresh(): Promise<void> {
    const stale = () => {
      const recent = this.monotonic() - RECENT_MS;
      return [...this.entries].filter(([, e]) => e.count !== this.writeCount() && e.usedAt >= recent);
    };
    const todo = stale()
      .sort(([, a], [, b]) => b.usedAt - a.usedAt)
      .slice(0, REFRESH_MAX);
    for (const [key, entry] of todo) {
      // Busy (a transaction, a request's query): try again shortly, while anything asked for lately is stale.
      if (!this.options.refresh!.idle()) return this.schedule();
      if (this.entries.get(key) !== entry) continue; // a request read it meanwhile
      const now = new Date(this.lastAt + (this.monotonic() - this.lastMonotonic));
      const count = this.writeCount();
      let loaded: Awaited<ReturnType<CachedLoad<V>>>;
      try {
        loaded = await entry.load(now);
      } catch {
        return; // the store away: the next request reads (and says so) itself
      }
      if (this.entries.get(key) !== entry) continue;
      if (loaded) this.entries.set(key, { count, from: now.getTime(), until: loaded.until, value: loaded.value, load: entry.load, usedAt: entry.usedAt });
      else this.entries.delete(key);
    }
    // Written again while this refresh ran: what it read may be stale already.
    if (!this.timer && stale().length > 0) this.schedule();
  }
}
