import type { Clock, Timer } from '../domain/clock.js';
import type { Logger } from '../logger.js';
import type { ConsoleAccessState, ConsoleStore } from '../store/console-store.js';

/** An open console connection as the watch sees it (ConsoleSession). */
export interface WatchedConsole {
  readonly tokenId: string;
  readonly isClosed: boolean;
  /** The end of the lease its access follows (ms since the epoch), or null: a re-check is due at that instant. */
  readonly followedEnd: number | null;
  /** The outcome of a re-check at `now`: its token's state, or null when the token no longer exists. */
  recheck(state: ConsoleAccessState | null, now: Date): void;
  /** The store could not answer the re-check at `now`. */
  recheckFailed(now: Date): void;
}

/**
 * setTimeout holds at most 2^31 - 1 ms (24.8 days) and fires at once beyond it; a lease end further away than this
 * is armed by a later periodic check instead.
 */
const MAX_TIMER_MS = 24 * 3_600_000;

/**
 * Re-checks every open console connection of this process together: one store query for all of them
 * (ConsoleStore.accessStates) every `everyMs`, and at each instant a followed lease ends (one timer per end
 * instant, shared by the connections of that lease). Revocations and leases shortened or cancelled on another
 * replica are seen within `everyMs` (the README promises ≤ 2 s; the default is 1 s); this replica's own
 * revocations close at once (ConsoleProxy.closeToken) and a lease's end is its own instant. It replaces one
 * timer and three queries per connection every second: 200 idle consoles took a whole core on PGlite (issue 11).
 * With no connection open it holds no timer.
 */
export class ConsoleWatch {
  private readonly members = new Set<WatchedConsole>();
  private readonly endTimers = new Map<number, Timer>();
  private tick: Timer | null = null;
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly deps: { readonly store: { readonly consoles: Pick<ConsoleStore, 'accessStates'> }; readonly clock: Clock; readonly logger: Logger },
    private readonly everyMs: number,
  ) {}

  get size(): number {
    return this.members.size;
  }

  add(member: WatchedConsole): void {
    if (this.closed) return;
    this.members.add(member);
    this.arm();
  }

  delete(member: WatchedConsole): void {
    this.members.delete(member);
    if (this.members.size === 0) this.disarm();
  }

  /** Asks for a re-check at `endMs` (a followed lease's end); connections following the same end share it. */
  wakeAt(endMs: number): void {
    if (this.closed || this.endTimers.has(endMs)) return;
    const delay = endMs - this.deps.clock.now().getTime();
    // Far away: a periodic check arms it when it comes nearer. Already past while access still holds (a store
    // whose answer disagrees with the end it gives): the periodic check follows it, rather than a busy loop.
    if (delay > MAX_TIMER_MS || delay <= 0) return;
    this.endTimers.set(
      endMs,
      this.deps.clock.setTimer(delay, () => {
        this.endTimers.delete(endMs);
        void this.check();
      }),
    );
  }

  /**
   * Re-checks every connection; resolves once a check that started after this call has decided. Calls during a
   * check share one follow-up check (a check that read the time just before a lease's end is not enough).
   */
  check(): Promise<void> {
    if (this.running === null) {
      const run = this.run().finally(() => {
        if (this.running === run) this.running = null;
      });
      this.running = run;
      return run;
    }
    this.queued ??= this.running.then(() => {
      this.queued = null;
      return this.check();
    });
    return this.queued;
  }

  /** Stops the timers (shutdown); connections are closed by their owner. */
  close(): void {
    this.closed = true;
    this.disarm();
    this.members.clear();
  }

  /** Never rejects: a failure is logged and the next check tries again. */
  private async run(): Promise<void> {
    const members = [...this.members].filter((m) => !m.isClosed);
    if (members.length === 0) return;
    const now = this.deps.clock.now();
    let states: ReadonlyMap<string, ConsoleAccessState>;
    try {
      states = await this.deps.store.consoles.accessStates([...new Set(members.map((m) => m.tokenId))], now);
    } catch (err) {
      // Access could not be confirmed (database unreachable): each connection decides by its lease's known end.
      this.deps.logger.warn({ err, connections: members.length }, 'console access re-check failed; trying again');
      for (const member of members) this.safely(() => member.recheckFailed(now));
      return;
    }
    for (const member of members) this.safely(() => member.recheck(states.get(member.tokenId) ?? null, now));
    this.pruneEndTimers();
  }

  private safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.deps.logger.error({ err }, 'console access re-check failed unexpectedly');
    }
  }

  /** Drops the timers of ends no open connection follows any more (a lease extended, its connections gone). */
  private pruneEndTimers(): void {
    const followed = new Set<number>();
    for (const member of this.members) if (!member.isClosed && member.followedEnd !== null) followed.add(member.followedEnd);
    for (const [end, timer] of this.endTimers) {
      if (followed.has(end)) continue;
      timer.cancel();
      this.endTimers.delete(end);
    }
  }

  private arm(): void {
    if (this.tick !== null || this.closed) return;
    this.tick = this.deps.clock.setTimer(this.everyMs, () => {
      this.tick = null;
      if (this.members.size === 0) return;
      this.arm();
      void this.check();
    });
  }

  private disarm(): void {
    this.tick?.cancel();
    this.tick = null;
    for (const timer of this.endTimers.values()) timer.cancel();
    this.endTimers.clear();
  }
}
