import { describe, expect, it } from 'vitest';
import { BackendUnavailableError } from '../../src/domain/errors.js';
import { BatchingEngineStore } from '../../src/engine/batching-engine-store.js';
import { Coalescer } from '../../src/store/coalescer.js';
import type { AllocationWrite, EngineStore } from '../../src/store/engine-store.js';
import { Semaphore, bounded, nextTicket } from '../../src/engine/semaphore.js';
import { leaseTransitions, roundsByKey } from '../../src/store/queries/engine-lease-transitions.js';

describe('coalescer (group commit of the engine store calls)', () => {
  it('calls made in one turn of the event loop go in one batch, each answered with its own result', async () => {
    const batches: number[][] = [];
    const c = new Coalescer(async (items: readonly number[]) => {
      batches.push([...items]);
      return items.map((i) => i * 10);
    }, { maxBatch: 100 });
    expect(await Promise.all([1, 2, 3].map((i) => c.submit(i)))).toEqual([10, 20, 30]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('calls made while a batch is being written wait for it and go together in the next, never more than maxBatch', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const c = new Coalescer(async (items: readonly number[]) => {
      batches.push([...items]);
      if (batches.length === 1) await gate;
      return items;
    }, { maxBatch: 2 });
    const first = c.submit(1);
    await new Promise((r) => setImmediate(r));
    const later = [2, 3, 4].map((i) => c.submit(i));
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([[1]]);
    release();
    expect(await Promise.all([first, ...later])).toEqual([1, 2, 3, 4]);
    expect(batches).toEqual([[1], [2, 3], [4]]);
  });

  it("a failed batch is tried item by item, so one item's failure fails only its own call", async () => {
    const c = new Coalescer(async (items: readonly number[]) => {
      if (items.includes(2)) throw new Error('bad item 2');
      return items;
    }, { maxBatch: 10, isolate: () => true });
    const results = await Promise.allSettled([1, 2, 3].map((i) => c.submit(i)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('when the store is away, every call of the batch fails at once, without a try per item', async () => {
    let calls = 0;
    const c = new Coalescer(async () => {
      calls++;
      throw new BackendUnavailableError('database: connection refused');
    }, { maxBatch: 10, isolate: (err) => !(err instanceof BackendUnavailableError) });
    const results = await Promise.allSettled([1, 2, 3].map((i) => c.submit(i)));
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    expect(calls).toBe(1);
  });
});

describe('batching engine store', () => {
  it("progress writes of several tasks go to the store as one batch, and only the task whose claim was lost gets ClaimLostError", async () => {
    const batches: AllocationWrite[][] = [];
    const inner = {
      async updateAllocations(writes: readonly AllocationWrite[]) {
        batches.push([...writes]);
        return writes.map((w) => (w.claim?.worker === 'stalled' ? 'claim_lost' : w.id === 'gone' ? 'not_found' : 'written'));
      },
    } as unknown as EngineStore;
    const store = new BatchingEngineStore(inner);
    const now = new Date('2030-01-01T00:00:00Z');
    const results = await Promise.allSettled([
      store.updateAllocation('a1', { step: 'power_off' }, now, [], { taskId: 't1', worker: 'w' }),
      store.updateAllocation('a2', { step: 'power_off' }, now, [], { taskId: 't2', worker: 'stalled' }),
      store.updateAllocation('gone', { step: 'power_off' }, now),
    ]);
    expect(batches.map((b) => b.map((w) => w.id))).toEqual([['a1', 'a2', 'gone']]);
    expect(results[0]).toEqual({ status: 'fulfilled', value: undefined });
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { name: 'ClaimLostError' } });
    expect(results[2]).toMatchObject({ status: 'rejected', reason: { name: 'NotFoundError' } });
  });
});

describe('semaphore (hardware calls at once, per engine queue)', () => {
  it('never lets more than its limit run at once, and serves waiters first come, first served', async () => {
    const s = new Semaphore(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      [0, 1, 2, 3, 4, 5].map((i) =>
        s.run(async () => {
          running++;
          most = Math.max(most, running);
          await new Promise((r) => setTimeout(r, 5));
          order.push(i);
          running--;
        }),
      ),
    );
    expect(most).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    expect(s.inUse).toBe(0);
  });

  it('a bounded object runs every method call through the semaphore and frees the slot when a call fails', async () => {
    const s = new Semaphore(1);
    const target = {
      async ok(x: number) {
        return x + 1;
      },
      async fail(): Promise<number> {
        throw new Error('no');
      },
    };
    const b = bounded(target, s);
    await expect(b.fail()).rejects.toThrow('no');
    expect(await b.ok(1)).toBe(2);
    expect(s.inUse).toBe(0);
  });

  it("a task's second call goes before the first calls of tasks started after it (calls wait in line by the task's ticket)", async () => {
    const s = new Semaphore(1);
    const order: string[] = [];
    const call = async (what: string) => {
      order.push(what);
      await new Promise((r) => setTimeout(r, 1));
    };
    // Three tasks, each a GET then a PATCH, all started at once. First come, first served would run every GET
    // first (a, b, c) and then the PATCHes; by ticket a task's PATCH waits only for the call holding the slot.
    const task = async (name: string, ticket: number) => {
      const driver = bounded({ call }, s, undefined, ticket);
      await driver.call(`${name} get`);
      await driver.call(`${name} patch`);
    };
    const first = nextTicket();
    const second = nextTicket();
    const third = nextTicket();
    await Promise.all([task('a', first), task('b', second), task('c', third)]);
    expect(order).toEqual(['a get', 'b get', 'a patch', 'b patch', 'c get', 'c patch']);
  });
});

describe('release calls give way to lessee marks', () => {
  it('a call bounded with yieldTo waits while calls queue for the other semaphore, and not for its holders alone', async () => {
    const marks = new Semaphore(1);
    const releases = new Semaphore(5);
    const order: string[] = [];
    let finishMark!: () => void;
    const markDone = marks.run(() => new Promise<void>((r) => (finishMark = r)).then(() => void order.push('mark 1')));
    const queuedMark = marks.run(async () => void order.push('mark 2'));
    const release = bounded({ async powerOff() { order.push('release'); } }, releases, marks).powerOff();
    await new Promise((r) => setTimeout(r, 5));
    expect(order).toEqual([]);
    finishMark();
    await Promise.all([markDone, queuedMark, release]);
    // The release went once nobody waited: right after mark 1, beside mark 2.
    expect(order.indexOf('mark 1')).toBe(0);
    expect(order).toContain('release');
    // A mark running alone, with nobody waiting, holds nothing back.
    let finishLone!: () => void;
    const lone = marks.run(() => new Promise<void>((r) => (finishLone = r)));
    await bounded({ async powerOff() { order.push('release 2'); } }, releases, marks).powerOff();
    expect(order.at(-1)).toBe('release 2');
    finishLone();
    await lone;
  });
});

describe('lease state changes of a batch of allocation writes', () => {
  const siblings = [
    { id: 'a1', lease_id: 'L', state: 'active', counts: true },
    { id: 'a2', lease_id: 'L', state: 'active', counts: true },
    { id: 'gone', lease_id: 'L', state: 'released', counts: false },
    { id: 'b1', lease_id: 'M', state: 'active', counts: true },
  ];

  it('are the ones the writes made one after the other give, each attributed to the write that caused it', () => {
    const { transitions, finalStates } = leaseTransitions(new Map([['L', 'active'], ['M', 'active']]), siblings, [
      { allocation_id: 'a1', state: 'releasing' },
      { allocation_id: 'b1', state: 'releasing' },
      { allocation_id: 'a2', state: 'releasing' },
      { allocation_id: 'a1', state: 'released' },
      { allocation_id: 'a2', state: 'released' },
      { allocation_id: 'b1' },
    ]);
    expect(transitions).toEqual([
      { index: 0, lease_id: 'L', from: 'active', to: 'ending' },
      { index: 1, lease_id: 'M', from: 'active', to: 'ending' },
      { index: 4, lease_id: 'L', from: 'ending', to: 'ended' },
    ]);
    expect(finalStates).toEqual(new Map([['L', 'ended'], ['M', 'ending']]));
  });

  it('change nothing for writes that leave the state alone or name no known allocation', () => {
    const { transitions, finalStates } = leaseTransitions(new Map([['L', 'active']]), siblings, [{ allocation_id: 'a1' }, { allocation_id: 'x', state: 'released' }]);
    expect(transitions).toEqual([]);
    expect(finalStates.size).toBe(0);
  });

  it('rounds keep one write per row, in order', () => {
    expect(roundsByKey(['a1', 'b1', 'a2', 'a3', 'c1'], (s) => s[0]!)).toEqual([['a1', 'b1', 'c1'], ['a2'], ['a3']]);
  });
});
