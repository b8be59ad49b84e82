import { describe, expect, it } from 'vitest';
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
});
