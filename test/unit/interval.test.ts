import { describe, expect, it } from 'vitest';
import { contains, fitsIn, merge, overlaps, subtract } from '../../src/domain/scheduling/interval.js';

const i = (start: number, end: number) => ({ start, end });

describe('time intervals', () => {
  it('treat touching intervals as not overlapping: a lease may start the instant another ends', () => {
    expect(overlaps(i(0, 10), i(10, 20))).toBe(false);
    expect(overlaps(i(0, 10), i(9, 20))).toBe(true);
  });

  it('merge touching and overlapping intervals', () => {
    expect(merge([i(5, 8), i(0, 3), i(3, 4), i(7, 12)])).toEqual([i(0, 4), i(5, 12)]);
  });

  it('subtract busy time from offer windows, open-ended ones included', () => {
    expect(subtract([i(0, Infinity)], [i(10, 20), i(30, 40)])).toEqual([i(0, 10), i(20, 30), i(40, Infinity)]);
    expect(subtract([i(0, 100)], [i(-5, 10), i(90, 200)])).toEqual([i(10, 90)]);
    expect(subtract([i(0, 10)], [i(0, 10)])).toEqual([]);
  });

  it('say whether a window fits in the free time', () => {
    const free = subtract([i(0, 100)], [i(40, 50)]);
    expect(fitsIn(free, i(0, 40))).toBe(true);
    expect(fitsIn(free, i(30, 60))).toBe(false);
    expect(contains(i(0, Infinity), i(5, 1e15))).toBe(true);
  });
});
