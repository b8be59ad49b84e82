// The timeline's time axis, pure: which range a zoom shows, moving it, time ↔ x, and the column labels.
// Ranges follow the viewer's calendar (local midnight, the 1st); the API is asked in UTC.

export type Zoom = 'day' | 'week' | 'month';
export const ZOOMS: readonly Zoom[] = ['day', 'week', 'month'];

export interface Range {
  /** Epoch ms, inclusive. */
  readonly start: number;
  /** Epoch ms, exclusive. */
  readonly end: number;
}

export interface Interval {
  readonly start: number;
  readonly end: number;
}

const HOUR = 3_600_000;

function startOfDay(t: number): Date {
  const d = new Date(t);
  d.setHours(0, 0, 0, 0);
  return d;
}

/**
 * The range a zoom shows from `anchor`: its local day, seven days from its day (a rolling week: on a Saturday a
 * calendar week would be five days of the past, and leases are booked forward), or its calendar month.
 */
export function rangeFor(zoom: Zoom, anchor: number): Range {
  const d = startOfDay(anchor);
  if (zoom === 'month') d.setDate(1);
  const end = new Date(d);
  if (zoom === 'day') end.setDate(end.getDate() + 1);
  else if (zoom === 'week') end.setDate(end.getDate() + 7);
  else end.setMonth(end.getMonth() + 1);
  return { start: d.getTime(), end: end.getTime() };
}

/** The anchor one range earlier (-1) or later (+1). */
export function shift(zoom: Zoom, anchor: number, direction: -1 | 1): number {
  const d = new Date(rangeFor(zoom, anchor).start);
  if (zoom === 'day') d.setDate(d.getDate() + direction);
  else if (zoom === 'week') d.setDate(d.getDate() + 7 * direction);
  else d.setMonth(d.getMonth() + direction);
  return d.getTime();
}

/** Linear time → x in [0, width] over the range (times outside it land outside [0, width]). */
export function timeToX(t: number, range: Range, width: number): number {
  return ((t - range.start) / (range.end - range.start)) * width;
}

export function xToTime(x: number, range: Range, width: number): number {
  return range.start + (x / width) * (range.end - range.start);
}

/** The part of an interval inside the range, or null when they do not overlap. Open ends (Infinity) are fine. */
export function clip(interval: Interval, range: Range): Interval | null {
  const start = Math.max(interval.start, range.start);
  const end = Math.min(interval.end, range.end);
  return end > start ? { start, end } : null;
}

/**
 * The grid's horizontal extent: the space available, but never so little that a column gets too narrow to read
 * (then the grid scrolls sideways inside its box, the node names staying put).
 */
export function trackWidth(zoom: Zoom, available: number): number {
  const min = zoom === 'day' ? 24 * 36 : zoom === 'week' ? 7 * 96 : 31 * 30;
  return Math.max(Math.floor(available), min);
}

export interface Tick {
  readonly t: number;
  readonly label: string;
  /** A major tick (a new day on the week view) gets a stronger line. */
  readonly major: boolean;
}

/** Column boundaries with their labels: hours on a day, days on a week or a month. */
export function ticks(zoom: Zoom, range: Range, locale?: string): Tick[] {
  const out: Tick[] = [];
  if (zoom === 'day') {
    // Hours only ("13", "1 PM"): a column is ~40 px wide.
    const fmt = new Intl.DateTimeFormat(locale, { hour: 'numeric' });
    for (let t = range.start; t < range.end; t += HOUR) out.push({ t, label: fmt.format(t), major: new Date(t).getHours() % 6 === 0 });
    return out;
  }
  const fmt =
    zoom === 'week'
      ? new Intl.DateTimeFormat(locale, { weekday: 'short', day: 'numeric', month: 'short' })
      : new Intl.DateTimeFormat(locale, { day: 'numeric' });
  const d = new Date(range.start);
  while (d.getTime() < range.end) {
    out.push({ t: d.getTime(), label: fmt.format(d), major: zoom === 'week' || d.getDay() === 1 });
    d.setDate(d.getDate() + 1);
  }
  return out;
}

/** A title for the range: "Tue, 1 Jan 2030", "1 – 7 Jan 2030", "January 2030". */
export function rangeTitle(zoom: Zoom, range: Range, locale?: string): string {
  if (zoom === 'day') return new Intl.DateTimeFormat(locale, { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' }).format(range.start);
  if (zoom === 'month') return new Intl.DateTimeFormat(locale, { month: 'long', year: 'numeric' }).format(range.start);
  const fmt = new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'short', year: 'numeric' });
  return `${fmt.format(range.start)} – ${fmt.format(range.end - 1)}`;
}

/** Where a click at time `t` in a free window starts a lease: snapped down to the zoom's step, never before the window. */
export function snapStart(zoom: Zoom, t: number, free: Interval): number {
  const step = zoom === 'month' ? 6 * HOUR : zoom === 'week' ? HOUR : 15 * 60_000;
  const d = new Date(t);
  // Snap in local time, so "10:00" means 10:00 for the viewer.
  const local = d.getTime() - d.getTimezoneOffset() * 60_000;
  const snapped = local - (((local % step) + step) % step) + d.getTimezoneOffset() * 60_000;
  return Math.max(snapped, free.start);
}
