import type { Held } from '../domain/scheduling/assess.js';

/** What a booking under way in this process holds until its transaction ends. */
export interface PendingHold {
  /** Ends the hold (the booking committed or failed): whoever waits for it plans again. */
  release(): void;
}

interface Entry {
  readonly held: readonly Held[];
  readonly settled: Promise<void>;
}

/**
 * The nodes that bookings of this process have planned and are booking right now, for the plans made meanwhile.
 * Without it, concurrent requests all chose the same best-fit nodes from the same tables: measured on PGlite, 64
 * clients racing for 2 of 16 nodes made 1,072 statements a round (each loser's booking transaction tried the
 * winners' nodes and every alternative, then planned again), p99 490 ms. With it, each plan steps around what is
 * being booked (the next requests take the next nodes), and a request that can only be met by nodes under booking
 * waits for those bookings to end and plans again against what they took: it is refused only when the capacity
 * really is taken. Per process only: replicas still meet in the booking's try-locks and the exclusion constraint,
 * which keep the last word.
 */
export class PendingBookings {
  private readonly byNode = new Map<string, Set<Entry>>();

  /** Holds `nodeIds` over [start, blockedUntil) until released (the planner calls it as it decides). */
  hold(nodeIds: readonly string[], start: number, blockedUntil: number): PendingHold {
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const entry: Entry = { held: nodeIds.map((node_id) => ({ node_id, start, blockedUntil })), settled };
    for (const id of nodeIds) {
      let set = this.byNode.get(id);
      if (!set) this.byNode.set(id, (set = new Set()));
      set.add(entry);
    }
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        for (const id of nodeIds) {
          const set = this.byNode.get(id);
          set?.delete(entry);
          if (set?.size === 0) this.byNode.delete(id);
        }
        settle();
      },
    };
  }

  /** Whether no booking is under way. */
  get idle(): boolean {
    return this.byNode.size === 0;
  }

  /** The windows held on `nodeId` by bookings under way. */
  heldOn(nodeId: string): readonly Held[] {
    const set = this.byNode.get(nodeId);
    if (!set) return [];
    return [...set].flatMap((e) => e.held.filter((h) => h.node_id === nodeId));
  }

  /**
   * Settles when every booking under way that holds one of `nodeIds` over part of [start, end) has ended, or null
   * when there is none (nothing to wait for).
   */
  settledOn(nodeIds: Iterable<string>, start: number, end: number): Promise<void> | null {
    const waits = new Set<Promise<void>>();
    for (const id of nodeIds) {
      for (const entry of this.byNode.get(id) ?? []) {
        if (entry.held.some((h) => h.node_id === id && h.start < end && start < h.blockedUntil)) waits.add(entry.settled);
      }
    }
    return waits.size === 0 ? null : Promise.all(waits).then(() => undefined);
  }
}

/**
 * A plan that could not be met while other bookings of this process were taking some of its candidates: the
 * caller waits for `settled` and plans again. Never leaves the leasing service (it is not an API error).
 */
export class WaitForPendingBookings extends Error {
  constructor(readonly settled: Promise<void>) {
    super('the request waits for bookings under way on its candidates');
    this.name = 'WaitForPendingBookings';
  }
}
