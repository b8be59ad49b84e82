import { describe, expect, it } from 'vitest';
import { DEFAULT_NOTICE_OFFSETS_MS, dueNotices, formatEndsIn, noticeSchedule, normalizeOffsets } from '../../src/domain/notices.js';
import { ManualClock } from '../../src/domain/manual-clock.js';

const H = 3_600_000;
const D = 24 * H;

describe('notices before a lease ends', () => {
  const clock = new ManualClock('2030-01-01T00:00:00Z');
  const start = clock.now();
  const lease = { start, end: new Date(start.getTime() + 3 * D) };

  it('by default a lease hears of its end a day and an hour before it', () => {
    expect(noticeSchedule(lease, DEFAULT_NOTICE_OFFSETS_MS, new Map()).map((n) => n.at.toISOString())).toEqual([
      '2030-01-03T00:00:00.000Z',
      '2030-01-03T23:00:00.000Z',
    ]);
  });

  it('a notice is due from its instant until the end, and not before', async () => {
    const c = new ManualClock(start);
    expect(dueNotices(lease, [D, H], new Set(), c.now())).toBeNull();
    await c.advanceTo('2030-01-03T00:00:00Z');
    expect(dueNotices(lease, [D, H], new Set(), c.now())).toEqual({ offsets: [D], announce: D });
    expect(dueNotices(lease, [D, H], new Set([D]), c.now())).toBeNull();
    await c.advanceTo('2030-01-03T23:30:00Z');
    expect(dueNotices(lease, [D, H], new Set([D]), c.now())).toEqual({ offsets: [H], announce: H });
  });

  it('several notices due at once are one announcement, for the nearest to the end', () => {
    const late = new Date(lease.end.getTime() - 30 * 60_000);
    expect(dueNotices(lease, [D, H], new Set(), late)).toEqual({ offsets: [D, H], announce: H });
  });

  it('nothing is due once the lease has ended, nor before it starts', () => {
    expect(dueNotices(lease, [D, H], new Set(), lease.end)).toBeNull();
    expect(dueNotices(lease, [D, H], new Set(), new Date(lease.end.getTime() + H))).toBeNull();
    const later = { start: new Date(start.getTime() + D), end: new Date(start.getTime() + D + H / 2) };
    expect(dueNotices(later, [H], new Set(), start)).toBeNull();
  });

  it('a lease shorter than an offset hears that notice when it starts, not before', () => {
    const short = { start, end: new Date(start.getTime() + H / 2) };
    expect(noticeSchedule(short, [H], new Map())[0]!.at).toEqual(start);
    expect(dueNotices(short, [H], new Set(), start)).toEqual({ offsets: [H], announce: H });
  });

  it('the schedule says which notices were sent and which are still to come', () => {
    const sentAt = new Date('2030-01-03T00:00:02Z');
    const schedule = noticeSchedule(lease, [H, D], new Map([[D, sentAt]]));
    expect(schedule.map((n) => [n.offset_ms, n.sent_at])).toEqual([
      [D, sentAt],
      [H, null],
    ]);
  });

  it('offsets are positive and distinct, largest first, and at most ten', () => {
    expect(normalizeOffsets([H, D, H])).toEqual([D, H]);
    expect(() => normalizeOffsets([0])).toThrow(/longer than zero/);
    expect(() => normalizeOffsets(Array.from({ length: 11 }, (_, i) => (i + 1) * H))).toThrow(/at most 10/);
  });

  it('says how long until the end the way a person reads it', () => {
    expect(formatEndsIn(2 * D + 5 * H + 59_000)).toBe('2d 5h');
    expect(formatEndsIn(H + 5 * 60_000)).toBe('1h 5m');
    expect(formatEndsIn(45_000)).toBe('45s');
    expect(formatEndsIn(-1)).toBe('now');
  });
});
