/**
 * At most `limit` holders at once, served first come, first served: bounds how many calls go to the hardware at
 * the same moment while many more tasks are in flight (their waits and store writes cost the hardware nothing).
 */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private idleWaiters: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError(`semaphore limit must be at least 1, got ${limit}`);
  }

  /** Holders now (for tests and logs). */
  get inUse(): number {
    return this.active;
  }

  /** Resolves once nobody waits for the semaphore (at once if nobody does): its holders alone keep up. */
  whenUncontended(): Promise<void> {
    if (this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
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
      if (this.waiting.length === 0 && this.idleWaiters.length > 0) {
        const idle = this.idleWaiters;
        this.idleWaiters = [];
        for (const resolve of idle) resolve();
      }
    }
  }
}

/**
 * The object with every method call made through the semaphore (a hardware driver bounded per queue). With
 * `yieldTo`, a call first waits while calls queue for that semaphore: the release queue's calls give way to the
 * mark queue's when the hardware cannot keep up with the marks, so a burst of ends clears every lessee in Ironic
 * before the cleanings' calls compete with the clears (measured against a real Ironic: 200 releases polling their
 * nodes slowed the clears to a third of Ironic's rate). When marks are quick (nobody waits), nothing is held back.
 */
export function bounded<T extends object>(target: T, semaphore: Semaphore, yieldTo?: Semaphore): T {
  return new Proxy(target, {
    get(object, name, receiver) {
      const value: unknown = Reflect.get(object, name, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (yieldTo) await yieldTo.whenUncontended();
        return semaphore.run(() => Promise.resolve((value as (...a: unknown[]) => unknown).apply(object, args)));
      };
    },
  });
}
