import { afterEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import { SimulatedDriver } from '../../src/drivers/simulated/simulated-driver.js';
import { HOUR, MINUTE, NODE_IDS, TIMINGS, at, harness, nodeSpec } from './helpers.js';
import type { Harness } from './helpers.js';
import { PROMPTLY_MS } from '../support/timing.js';

const [N1] = NODE_IDS;
let h: Harness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

describe('lease engine: timer', () => {
  it('a started engine hands the node over at the due time and releases it at the end, without runDue by hand', async () => {
    h = await harness();
    const engine = h.engine({ pollMs: 10 * MINUTE });
    const runDue = vi.spyOn(engine, 'runDue');
    engine.start();
    const lease = await h.createLease({ start: at(30_000), end: at(HOUR), nodes: [N1] });
    engine.wake();
    // start() and wake() each ask for a run (the second shares the queued one); each re-arms the timer.
    await vi.waitFor(() => expect(runDue).toHaveBeenCalledTimes(2));
    await Promise.all(runDue.mock.results.map((r) => r.value));
    runDue.mockClear();

    // One millisecond before the start: nothing yet.
    await h.clock.advanceTo(at(29_999));
    await new Promise((r) => setTimeout(r, 50));
    expect((await h.lease(lease.id)).state).toBe('pending');

    // At the start instant the timer fires and the node is handed over, with the clock standing still.
    await h.clock.advanceTo(at(30_000));
    await vi.waitFor(async () => expect((await h!.lease(lease.id)).state).toBe('active'), { timeout: 5_000 });
    expect(h.clock.now()).toEqual(at(30_000));
    expect(runDue).toHaveBeenCalled(); // by the timer, not by this test
    expect((await h.sim.getNode(N1)).lessee).toBe(h.lesseeId);

    // At the end the release starts and its waits (settleMs) are timers too.
    await h.clock.advanceTo(at(HOUR));
    await vi.waitFor(async () => expect((await h!.lease(lease.id)).state).toBe('ending'), { timeout: 5_000 });
    // Each step of the release is a timer of the manual clock; a busy machine needs more real time per step.
    for (let i = 0; i < 60 && (await h.lease(lease.id)).state !== 'ended'; i++) {
      await h.clock.advance(1_000);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await h.lease(lease.id)).state).toBe('ended');
    await engine.stop();
  }, 90_000);

  it('a lease created by another replica (no wake) is picked up by the safety re-check', async () => {
    h = await harness();
    const engine = h.engine({ pollMs: 10_000 });
    engine.start();
    await new Promise((r) => setTimeout(r, 50));
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    // The timer armed before the lease existed looks again after pollMs at the latest: the start is not missed.
    await h.clock.advanceTo(at(MINUTE));
    await vi.waitFor(async () => expect((await h!.lease(lease.id)).state).toBe('active'), { timeout: 5_000 });
    await engine.stop();
  });

  it('with the system clock the start happens at its due time, not at the next safety poll', async () => {
    const sim = new SimulatedDriver({ nodes: [nodeSpec(0)], clock: systemClock, timings: TIMINGS });
    h = await harness({ sim, clock: undefined });
    try {
      const engine = h.engine({ clock: systemClock, settleMs: 50 });
      engine.start();
      const start = new Date(Date.now() + 300);
      const lease = await h.createLease({ start, end: new Date(start.getTime() + 400), nodes: [N1] });
      engine.wake();
      await vi.waitFor(async () => expect((await h!.lease(lease.id)).allocations[0]?.state).not.toBe('reserved'), {
        timeout: 5_000,
        interval: 10,
      });
      // At its due time, not at the next 10 s safety poll.
      expect(Date.now() - start.getTime()).toBeLessThan(PROMPTLY_MS);
      await vi.waitFor(async () => expect((await h!.lease(lease.id)).state).toBe('ended'), { timeout: 10_000, interval: 20 });
      expect((await sim.getNode(N1)).provision_state).toBe('available');
      await engine.stop();
    } finally {
      await sim.close();
    }
  });

  it('stop() waits for the task running now and no timer fires afterwards', async () => {
    h = await harness();
    let unblock: () => void = () => undefined;
    h.spy.hook = (method) => (method === 'updateNode' ? new Promise<void>((r) => (unblock = r)) : undefined);
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    engine.start();
    await h.clock.advanceTo(at(MINUTE));
    await vi.waitFor(() => expect(h!.spy.calls.some((c) => c.method === 'getNode')).toBe(true));
    let stopped = false;
    const stopping = engine.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(stopped).toBe(false);
    unblock();
    await stopping;
    expect((await h.lease(lease.id)).state).toBe('active');
    const runDue = vi.spyOn(engine, 'runDue');
    await h.clock.advanceTo(at(2 * HOUR));
    await new Promise((r) => setTimeout(r, 50));
    expect(runDue).not.toHaveBeenCalled();
    expect((await h.lease(lease.id)).state).toBe('active');
  });
});
