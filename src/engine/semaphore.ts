let tickets = 0;

/**
 * A place in line: lower goes first. A task takes one when it is claimed and passes it with each of its calls, so
 * the calls of a task claimed earlier go before those of one claimed later, whenever each call is made.
 */
export function nextTicket(): number {
  return tickets++;
}

/**
 * At most `limit` holders at once, served by ticket (first come, first served for calls that bring none): bounds
 * how many calls go to the hardware at the same moment while many more tasks are in flight (their waits and store
 * writes cost the hardware nothing). By ticket, a task's second call (Ironic's PATCH after its GET) is not queued
 * behind the first calls of every task claimed after it: measured against a real Ironic, a 4-node lease starting
 * with a 200-node one waited 3.6 s for its lessees, its PATCHes behind ~44 GETs of the big lease's later tasks.
 */
export class Semaphore {
  private active = 0;
  /** Waiters sorted by ticket (equal tickets in arrival order). */
  private readonly waiting: { readonly ticket: number; readonly resolve: () => void }[] = [];
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

  async run<T>(fn: () => Promise<T>, ticket: number = nextTicket()): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.enqueue(ticket, resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      // The slot passes straight to the next waiter (never dropped and re-taken, so nobody overtakes a waiter).
      const next = this.waiting.shift();
      if (next) next.resolve();
      else this.active--;
      if (this.waiting.length === 0 && this.idleWaiters.length > 0) {
        const idle = this.idleWaiters;
        this.idleWaiters = [];
        for (const resolve of idle) resolve();
      }
    }
  }

  private enqueue(ticket: number, resolve: () => void): void {
    // Binary search for the first waiter with a later ticket: a few hundred waiters at most.
    let lo = 0;
    let hi = this.waiting.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.waiting[mid]!.ticket <= ticket) lo = mid + 1;
      else hi = mid;
    }
    this.waiting.splice(lo, 0, { ticket, resolve });
  }
}

/**
 * The object with every method call made through the semaphore (a hardware driver bounded per queue). With
 * `yieldTo`, a call first waits while calls queue for that semaphore: the release queue's calls give way to the
 * mark queue's when the hardware cannot keep up with the marks, so a burst of ends clears every lessee in Ironic
 * before the cleanings' calls compete with the clears (measured against a real Ironic: 200 releases polling their
 * nodes slowed the clears to a third of Ironic's rate). When marks are quick (nobody waits), nothing is held back.
 * With `ticket` (a task's driver), every call waits its turn by it.
 */
export function bounded<T extends object>(target: T, semaphore: Semaphore, yieldTo?: Semaphore, ticket?: number): T {
  return new Proxy(target, {
    get(object, name, receiver) {
      const value: unknown = Reflect.get(object, name, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        if (yieldTo) await yieldTo.whenUncontended();
        return semaphore.run(() => Promise.resolve((value as (...a: unknown[]) => unknown).apply(object, args)), ticket);
      };
    },
  });
}
