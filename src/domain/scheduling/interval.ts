/**
 * Half-open time intervals [start, end) in epoch milliseconds; `end = Infinity` for an open-ended offer.
 * Pure helpers for free windows, containment and the earliest-start search.
 */
export interface Interval {
  readonly start: number;
  readonly end: number;
}

export function overlaps(a: Interval, b: Interval): boolean {
  return a.start < b.end && b.start < a.end;
}

export function contains(outer: Interval, inner: Interval): boolean {
  return outer.start <= inner.start && inner.end <= outer.end;
}

/** Sorts and merges touching or overlapping intervals. */
export function merge(intervals: readonly Interval[]): Interval[] {
  const sorted = [...intervals].filter((i) => i.end > i.start).sort((a, b) => a.start - b.start);
  const out: Interval[] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last && i.start <= last.end) out[out.length - 1] = { start: last.start, end: Math.max(last.end, i.end) };
    else out.push(i);
  }
  return out;
}

/** `from` minus every interval of `busy`. */
export function subtract(from: readonly Interval[], busy: readonly Interval[]): Interval[] {
  const holes = merge(busy);
  const out: Interval[] = [];
  for (const window of merge(from)) {
    let cursor = window.start;
    for (const h of holes) {
      if (h.end <= cursor || h.start >= window.end) continue;
      if (h.start > cursor) out.push({ start: cursor, end: h.start });
      cursor = Math.max(cursor, h.end);
      if (cursor >= window.end) break;
    }
    if (cursor < window.end) out.push({ start: cursor, end: window.end });
  }
  return out;
}

/** True when `window` lies inside one of `free` (which must be merged, e.g. from `subtract`). */
export function fitsIn(free: readonly Interval[], window: Interval): boolean {
  return free.some((f) => contains(f, window));
}
