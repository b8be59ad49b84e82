import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * A first-come first-served async lock. PGlite is one single-session backend: whoever holds the mutex owns the
 * session, so a transaction's statements are never interleaved with another caller's.
 *
 * A hold handed to a waiting caller passes through one turn of the event loop first. PGlite runs a query inside
 * the JavaScript thread and answers through promises only, so a queue of callers would otherwise go from one
 * query to the next in microtasks and starve timers and sockets for as long as the queue lasts: with the lease
 * engine's pipeline over 100 ends, simulated power-offs of 5 ms took 5 s to be seen and a lessee's request waited
 * 8.9 s (issue 15). Uncontended holds are handed at once.
 */
export class AsyncMutex {
  private tail: Promise<void> = Promise.resolve();
  /** Holders holding or waiting. */
  private holders = 0;

  /** Holders holding (0 or 1) and waiting behind: the metrics' view of PGlite's one session. */
  get load(): { readonly holding: number; readonly waiting: number } {
    return { holding: Math.min(this.holders, 1), waiting: Math.max(0, this.holders - 1) };
  }

  /** Resolves, once every earlier holder has released, with the function that releases this hold. */
  acquire(): Promise<() => void> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const contended = this.holders > 0;
    this.holders++;
    const turn = contended ? this.tail.then(() => nextTurn()) : this.tail;
    const acquired = turn.then(() => {
      let done = false;
      // Releasing twice must not release a later holder's turn.
      return () => {
        if (done) return;
        done = true;
        this.holders--;
        release();
      };
    });
    this.tail = this.tail.then(() => released);
    return acquired;
  }

  async runExclusive<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }
}
