import { describe, expect, test } from 'vitest';
import { box, formatSpan, layoutRow, MIN_BAR_PX, requestHref, type AvailabilityNode } from '../src/timeline/layout';
import { clip, rangeFor, shift, snapStart, ticks, timeToX, trackWidth, xToTime } from '../src/timeline/scale';
import { scrollToRow, virtualWindow } from '../src/timeline/virtual';

// Local calendar times, so the tests hold in any time zone the machine is in.
const local = (y: number, m: number, d: number, h = 0, min = 0) => new Date(y, m - 1, d, h, min).getTime();
const HOUR = 3_600_000;

describe('the time axis', () => {
  test('a day is local midnight to midnight; a week the seven days from that day; a month from the 1st', () => {
    const wed = local(2030, 1, 2, 15, 30); // Wednesday 2 January 2030
    expect(rangeFor('day', wed)).toEqual({ start: local(2030, 1, 2), end: local(2030, 1, 3) });
    expect(rangeFor('week', wed)).toEqual({ start: local(2030, 1, 2), end: local(2030, 1, 9) });
    expect(rangeFor('month', wed)).toEqual({ start: local(2030, 1, 1), end: local(2030, 2, 1) });
  });

  test('moving back and forward goes one whole day, week or month', () => {
    const t = local(2030, 1, 31, 12);
    expect(rangeFor('day', shift('day', t, 1)).start).toBe(local(2030, 2, 1));
    expect(rangeFor('week', shift('week', t, -1)).start).toBe(local(2030, 1, 24));
    expect(rangeFor('month', shift('month', t, 1))).toEqual({ start: local(2030, 2, 1), end: local(2030, 3, 1) });
    expect(rangeFor('month', shift('month', t, -1)).start).toBe(local(2029, 12, 1));
  });

  test('time → x is linear over the range, and x → time inverts it', () => {
    const range = { start: 0, end: 24 * HOUR };
    expect(timeToX(0, range, 960)).toBe(0);
    expect(timeToX(6 * HOUR, range, 960)).toBe(240);
    expect(timeToX(24 * HOUR, range, 960)).toBe(960);
    expect(timeToX(-HOUR, range, 960)).toBe(-40);
    expect(xToTime(240, range, 960)).toBe(6 * HOUR);
  });

  test('clipping keeps the part of an interval inside the range; none when they only touch', () => {
    const range = { start: 100, end: 200 };
    expect(clip({ start: 50, end: 150 }, range)).toEqual({ start: 100, end: 150 });
    expect(clip({ start: 120, end: Infinity }, range)).toEqual({ start: 120, end: 200 });
    expect(clip({ start: 0, end: 100 }, range)).toBeNull();
    expect(clip({ start: 200, end: 300 }, range)).toBeNull();
  });

  test('the grid is at least wide enough to read each column, and fills the space when there is more', () => {
    expect(trackWidth('day', 278)).toBe(24 * 36);
    expect(trackWidth('week', 1100)).toBe(1100);
    expect(trackWidth('month', 300)).toBe(31 * 30);
  });

  test('columns: 24 hours on a day, 7 days on a week, every day of the month', () => {
    expect(ticks('day', rangeFor('day', local(2030, 1, 2)))).toHaveLength(24);
    expect(ticks('week', rangeFor('week', local(2030, 1, 2)))).toHaveLength(7);
    expect(ticks('month', rangeFor('month', local(2030, 2, 10)))).toHaveLength(28);
  });

  test('a click in a free slot starts at the zoom step below it, never before the slot', () => {
    const free = { start: local(2030, 1, 2, 10, 10), end: local(2030, 1, 2, 18) };
    expect(snapStart('day', local(2030, 1, 2, 13, 7), free)).toBe(local(2030, 1, 2, 13));
    expect(snapStart('week', local(2030, 1, 2, 13, 50), free)).toBe(local(2030, 1, 2, 13));
    expect(snapStart('day', local(2030, 1, 2, 10, 12), free)).toBe(free.start);
  });
});

describe('the virtual window of rows', () => {
  test('renders the rows in view plus the overscan, and a spacer for the rest', () => {
    expect(virtualWindow({ rowCount: 1000, rowHeight: 34, scrollTop: 0, viewport: 600, overscan: 6 })).toEqual({
      first: 0,
      last: 25, // ceil(600 / 34) + 1 = 19 visible, + 6 below
      offset: 0,
      total: 34_000,
    });
    const mid = virtualWindow({ rowCount: 1000, rowHeight: 34, scrollTop: 34 * 500 + 10, viewport: 600, overscan: 6 });
    expect(mid).toEqual({ first: 494, last: 525, offset: 494 * 34, total: 34_000 });
  });

  test('stays bounded wherever it is scrolled, clamps past the end, and handles an empty list', () => {
    for (let top = -500; top < 40_000; top += 777) {
      const w = virtualWindow({ rowCount: 1000, rowHeight: 34, scrollTop: top, viewport: 600 });
      expect(w.last - w.first).toBeLessThanOrEqual(32);
      expect(w.first).toBeGreaterThanOrEqual(0);
      expect(w.last).toBeLessThanOrEqual(1000);
    }
    expect(virtualWindow({ rowCount: 1000, rowHeight: 34, scrollTop: 1e9, viewport: 600 }).last).toBe(1000);
    expect(virtualWindow({ rowCount: 0, rowHeight: 34, scrollTop: 0, viewport: 600 })).toEqual({ first: 0, last: 0, offset: 0, total: 0 });
    expect(virtualWindow({ rowCount: 3, rowHeight: 34, scrollTop: 0, viewport: 600 })).toMatchObject({ first: 0, last: 3 });
  });

  test('scrollToRow brings a row into view only when it is not', () => {
    expect(scrollToRow(10, 34, 0, 600)).toBeNull();
    expect(scrollToRow(30, 34, 0, 600)).toBe(31 * 34 - 600);
    expect(scrollToRow(2, 34, 340, 600)).toBe(68);
  });
});

describe('a row of the timeline', () => {
  const range = { start: local(2030, 1, 2), end: local(2030, 1, 3) };
  const iso = (t: number) => new Date(t).toISOString();
  const node: AvailabilityNode = {
    id: 'n1',
    name: 'gpu-01',
    resource_class: null,
    owned: false,
    owner_project: null,
    unavailable: null,
    offers: [{ id: 'o1', start: iso(local(2030, 1, 1)), end: iso(local(2030, 1, 2, 20)), max_lease_duration: null, min_lease_duration: null, weekly_summary: null, windows: null }],
    busy: [
      { start: iso(local(2030, 1, 2, 10)), end: iso(local(2030, 1, 2, 14)), kind: 'lease' },
      { start: iso(local(2030, 1, 2, 14)), end: iso(local(2030, 1, 2, 14, 10)), kind: 'cleaning' },
      {
        start: iso(local(2030, 1, 1, 20)),
        end: iso(local(2030, 1, 2, 2)),
        kind: 'lease',
        lease: { id: 'L1', name: 'astro-run', state: 'active', project: { id: 'p-me', name: 'astro' } },
      },
    ],
    free: [{ start: iso(local(2030, 1, 2, 14, 20)), end: iso(local(2030, 1, 2, 20)) }],
  };
  // A 24-hour locale, so the names read the same on any machine.
  const layout = layoutRow(node, range, 960, { zoom: 'day', projectId: 'p-me', locale: 'en-GB' });

  test('offer windows are shaded where they overlap the range; time outside them is left unavailable', () => {
    expect(layout.offered).toEqual([{ left: 0, width: 800 }]);
  });

  test('an offer with weekly windows is shaded only inside them', () => {
    const weekly = {
      ...node.offers[0]!,
      weekly_summary: 'Daily 18:00–08:00 (next day) (UTC)',
      windows: [{ start: iso(local(2030, 1, 2)), end: iso(local(2030, 1, 2, 8)) }, { start: iso(local(2030, 1, 2, 18)), end: iso(local(2030, 1, 3)) }],
    };
    const shaded = layoutRow({ ...node, offers: [weekly] }, range, 960, { zoom: 'day', projectId: 'p-me', locale: 'en-GB' });
    expect(shaded.offered).toEqual([{ left: 0, width: 320 }, { left: 720, width: 240 }]);
  });

  test("another project's lease is only busy, with an accessible name; cleaning is its own kind", () => {
    const busy = layout.segments.find((s) => s.kind === 'lease' && s.text === 'busy');
    expect(busy).toMatchObject({ left: 400, width: 160, href: null, label: `gpu-01 busy ${formatSpan(local(2030, 1, 2, 10), local(2030, 1, 2, 14), 'day', 'en-GB')}` });
    expect(busy!.label).toMatch(/^gpu-01 busy 10:00.14:00$/);
    const cleaning = layout.segments.find((s) => s.kind === 'cleaning')!;
    expect(cleaning.label).toMatch(/^gpu-01 cleaning 14:00.14:10$/);
    expect(cleaning.width).toBeCloseTo(960 / 24 / 6);
  });

  test('the caller’s own lease is named, links to its page, and is clipped at the start of the range', () => {
    const mine = layout.segments.find((s) => s.kind === 'lease' && s.mine);
    expect(mine).toMatchObject({ left: 0, width: 80, text: 'astro-run', href: '/leases/L1' });
    // The name keeps the real bounds: it began the day before.
    expect(mine!.label).toContain('gpu-01 astro-run');
    expect(mine!.label).not.toMatch(/00:00–02:00$/);
  });

  test('a free slot says where it starts and that choosing it requests a lease', () => {
    const free = layout.segments.find((s) => s.kind === 'free')!;
    expect(free.label).toMatch(/^gpu-01 free from 14:20 until 20:00, request a lease$/);
    expect(requestHref(node, free.start)).toBe(`/leases/new?node=gpu-01&start=${encodeURIComponent(iso(local(2030, 1, 2, 14, 20)))}`);
  });

  test('a node the caller owns counts as offered over the whole range; tiny bars stay visible', () => {
    const owned = layoutRow({ ...node, owned: true, offers: [] }, range, 960, { zoom: 'day', projectId: 'p-me' });
    expect(owned.offered).toEqual([{ left: 0, width: 960 }]);
    expect(box({ start: range.start, end: range.start + 1000 }, range, 960)).toEqual({ left: 0, width: MIN_BAR_PX });
  });
});
