/**
 * At most `limit` holders at once, served first come, first served: bounds how many calls go to the hardware at
 * the same moment while many more tasks are in flight (their waits and store writes cost the hardware nothing).
 */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError(`semaphore limit must be at least 1, got ${limit}`);
  }

  /** Holders now (for tests and logs). */
  get inUse(): number {
    return this.active;
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      // The slot passes straight to the next waiter (never dropped and re-taken, so nobody overtakes a waiter).
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/** The object with every method call made through the semaphore (a hardware driver bounded per queue). */
export function bounded<T extends object>(target: T, semaphore: Semaphore): T {
  return new Proxy(target, {
    get(object, name, receiver) {
      const value: unknown = Reflect.get(object, name, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => semaphore.run(() => Promise.resolve((value as (...a: unknown[]) => unknown).apply(object, args)));
    },
  });
}
