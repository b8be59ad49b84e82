/**
 * A first-come first-served async lock. PGlite is one single-session backend: whoever holds the mutex owns the
 * session, so a transaction's statements are never interleaved with another caller's.
 */
export class AsyncMutex {
  private tail: Promise<void> = Promise.resolve();

  /** Resolves, once every earlier holder has released, with the function that releases this hold. */
  acquire(): Promise<() => void> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const acquired = this.tail.then(() => {
      let done = false;
      // Releasing twice must not release a later holder's turn.
      return () => {
        if (done) return;
        done = true;
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
