import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReadCache } from '../../src/store/read-cache.js';

describe('ReadCache', () => {
  const t = (ms: number) => new Date(Date.UTC(2030, 0, 1) + ms);

  it('answers a repeat from what it kept until a write, and reads again after one', async () => {
    let writes = 0;
    let loads = 0;
    const cache = new ReadCache<string>(() => writes);
    const load = async () => ({ value: `v${++loads}`, until: Infinity });
    expect(await cache.read('k', t(0), load)).toBe('v1');
    expect(await cache.read('k', t(5), load)).toBe('v1');
    writes++;
    expect(await cache.read('k', t(5), load)).toBe('v2');
    expect(await cache.read('other', t(5), load)).toBe('v3');
  });

  it('keeps an answer only between the instant it was read for and its next change', async () => {
    let loads = 0;
    const cache = new ReadCache<number>(() => 0);
    const load = async () => ({ value: ++loads, until: t(100).getTime() });
    expect(await cache.read('k', t(50), load)).toBe(1);
    expect(await cache.read('k', t(99), load)).toBe(1);
    expect(await cache.read('k', t(100), load)).toBe(2); // the next change came: read again
    expect(await cache.read('k', t(40), load)).toBe(3); // before the instant it was read for (a clock set back)
  });

  it('never keeps a read during which a write landed, nor an answer of null', async () => {
    let writes = 0;
    let loads = 0;
    const cache = new ReadCache<number>(() => writes);
    const racing = async () => {
      writes++; // committed while the read was under way
      return { value: ++loads, until: Infinity };
    };
    expect(await cache.read('k', t(0), racing)).toBe(1);
    expect(await cache.read('k', t(0), async () => ({ value: ++loads, until: Infinity }))).toBe(2);
    expect(await cache.read('n', t(0), async () => null)).toBeNull();
    expect(await cache.read('n', t(0), async () => ({ value: 7, until: Infinity }))).toBe(7);
  });

  describe('read again after a write', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    /** A cache over a counter of writes, a store that is idle or not, and a monotonic clock the test moves. */
    function rig() {
      vi.useFakeTimers();
      const state = { writes: 0, idle: true, mono: 0, loads: [] as Array<{ key: string; at: number }> };
      const cache = new ReadCache<string>(() => state.writes, { refresh: { idle: () => state.idle }, monotonic: () => state.mono });
      const load = (key: string, until = Infinity) => async (now: Date) => {
        state.loads.push({ key, at: now.getTime() });
        return { value: `${key}@${state.writes}`, until };
      };
      const write = () => {
        state.writes++;
        cache.written();
      };
      return { state, cache, load, write };
    }

    it('reads an answer asked for lately again once the store is idle, so the next request finds it kept', async () => {
      const { state, cache, load, write } = rig();
      expect(await cache.read('k', t(0), load('k'))).toBe('k@0');
      state.mono = 200;
      write();
      await vi.advanceTimersByTimeAsync(10);
      // Read again for the instant it was made at: the last request's plus the 200 ms since.
      expect(state.loads).toEqual([
        { key: 'k', at: t(0).getTime() },
        { key: 'k', at: t(200).getTime() },
      ]);
      expect(await cache.read('k', t(250), load('k'))).toBe('k@1');
      expect(state.loads).toHaveLength(2);
    });

    it('never reads while the store is busy: it waits until the store is idle', async () => {
      const { state, cache, load, write } = rig();
      await cache.read('k', t(0), load('k'));
      state.idle = false;
      write();
      await vi.advanceTimersByTimeAsync(50);
      expect(state.loads).toHaveLength(1);
      state.idle = true;
      await vi.advanceTimersByTimeAsync(10);
      expect(state.loads).toHaveLength(2);
      expect(await cache.read('k', t(0), load('k'))).toBe('k@1');
    });

    it('leaves an answer not asked for in the last 10 s to its next request', async () => {
      const { state, cache, load, write } = rig();
      await cache.read('old', t(0), load('old'));
      state.mono = 10_001;
      write();
      await vi.advanceTimersByTimeAsync(20);
      expect(state.loads).toHaveLength(1);
      expect(await cache.read('old', t(10_001), load('old'))).toBe('old@1');
      expect(state.loads).toHaveLength(2);
    });

    it('a write while it reads again leaves that answer stale: the next request reads, never the stale answer', async () => {
      const { state, cache, write } = rig();
      let racing = false;
      const load = async (now: Date) => {
        const value = `v${state.writes}@${now.getTime() - t(0).getTime()}`; // what the rows said when read
        if (racing) {
          racing = false;
          state.writes++; // committed while the refresh's read was under way, not yet told
        }
        return { value, until: Infinity };
      };
      await cache.read('k', t(0), load);
      racing = true;
      write();
      await vi.advanceTimersByTimeAsync(10);
      expect(await cache.read('k', t(0), load)).toBe('v2@0');
    });

    it('does nothing without the refresh option: a write leaves the answer to the next request', async () => {
      vi.useFakeTimers();
      let writes = 0;
      let loads = 0;
      const cache = new ReadCache<number>(() => writes);
      const load = async () => ({ value: ++loads, until: Infinity });
      await cache.read('k', t(0), load);
      writes++;
      cache.written();
      await vi.advanceTimersByTimeAsync(50);
      expect(loads).toBe(1);
    });
  });
});

