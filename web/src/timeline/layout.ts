// One timeline row, pure: an availability row from the API turned into boxes in px for a range and a width —
// offer shading, free slots, lease and cleaning bars — each with the accessible name it is announced by.

import type { Schemas } from '../api/client';
import { clip, timeToX, type Interval, type Range, type Zoom } from './scale';

export type AvailabilityNode = Schemas['AvailabilityNode'];
export type BusyInterval = Schemas['BusyInterval'];

/** A bar narrower than this is widened so it can be seen (and pointed at). */
export const MIN_BAR_PX = 2;

export interface Box {
  readonly left: number;
  readonly width: number;
}

export type Segment =
  | (Box & { readonly kind: 'free'; readonly start: number; readonly end: number; readonly label: string })
  | (Box & {
      readonly kind: 'lease';
      readonly start: number;
      readonly end: number;
      readonly label: string;
      /** Shown on the bar: the lease's name, or "busy" for another project's. */
      readonly text: string;
      /** /leases/:id when the caller may open the lease. */
      readonly href: string | null;
      readonly mine: boolean;
    })
  | (Box & { readonly kind: 'cleaning'; readonly start: number; readonly end: number; readonly label: string });

export interface RowLayout {
  /** Offered time (shaded); the rest of the track reads as unavailable. */
  readonly offered: readonly Box[];
  /** Free slots first, then bars on top of them, each in time order. */
  readonly segments: readonly Segment[];
}

export interface LayoutOptions {
  readonly zoom: Zoom;
  /** The viewer's project id: its leases are "mine". */
  readonly projectId: string | null;
  readonly locale?: string;
}

const parse = (iso: string | null): number => (iso === null ? Infinity : Date.parse(iso));

export function box(interval: Interval, range: Range, width: number): Box | null {
  const c = clip(interval, range);
  if (!c) return null;
  const left = timeToX(c.start, range, width);
  const right = timeToX(c.end, range, width);
  return { left, width: Math.max(MIN_BAR_PX, right - left) };
}

function sameDay(a: number, b: number): boolean {
  const x = new Date(a);
  const y = new Date(b);
  return x.getFullYear() === y.getFullYear() && x.getMonth() === y.getMonth() && x.getDate() === y.getDate();
}

/**
 * "10:00–14:00" within one day on the day view; with dates otherwise ("2 Jan 10:00–3 Jan 14:00"). An end at
 * midnight belongs to the day before (a lease "until 24:00"), so it does not drag a date in.
 */
export function formatSpan(start: number, end: number, zoom: Zoom, locale?: string): string {
  const time = new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit' });
  const date = new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'short' });
  const oneDay = sameDay(start, end - 1);
  if (zoom === 'day' && oneDay) return `${time.format(start)}–${time.format(end)}`;
  if (oneDay) return `${date.format(start)} ${time.format(start)}–${time.format(end)}`;
  return `${date.format(start)} ${time.format(start)}–${date.format(end)} ${time.format(end)}`;
}

export function formatInstant(t: number, zoom: Zoom, locale?: string): string {
  const opts: Intl.DateTimeFormatOptions =
    zoom === 'day' ? { hour: '2-digit', minute: '2-digit' } : { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' };
  return new Intl.DateTimeFormat(locale, opts).format(t);
}

export function nodeLabel(node: Pick<AvailabilityNode, 'name' | 'id'>): string {
  return node.name ?? node.id;
}

export function layoutRow(node: AvailabilityNode, range: Range, width: number, options: LayoutOptions): RowLayout {
  const { zoom, projectId, locale } = options;
  const name = nodeLabel(node);
  // A project may lease the nodes it owns whenever they are free: the whole range counts as offered to it.
  // An offer with weekly windows is offered only inside them (the API lists them within the range).
  const offeredIntervals: Interval[] = node.owned
    ? [range]
    : node.offers.flatMap((o) => (o.windows ? o.windows.map((w) => ({ start: parse(w.start), end: parse(w.end) })) : [{ start: parse(o.start), end: parse(o.end) }]));
  const offered = offeredIntervals.flatMap((i) => box(i, range, width) ?? []);

  const segments: Segment[] = [];
  for (const f of node.free) {
    const interval = { start: parse(f.start), end: parse(f.end) };
    const b = box(interval, range, width);
    if (!b) continue;
    // A window running past the view says no end: the view does not know it.
    const until = interval.end < range.end ? ` until ${formatInstant(interval.end, zoom, locale)}` : '';
    const label = `${name} free from ${formatInstant(interval.start, zoom, locale)}${until}, request a lease`;
    segments.push({ ...b, kind: 'free', ...interval, label });
  }
  for (const busy of node.busy) {
    const interval = { start: parse(busy.start), end: parse(busy.end) };
    const b = box(interval, range, width);
    if (!b) continue;
    const span = formatSpan(interval.start, interval.end, zoom, locale);
    if (busy.kind === 'cleaning') {
      segments.push({ ...b, kind: 'cleaning', ...interval, label: `${name} cleaning ${span}` });
      continue;
    }
    const lease = busy.lease;
    if (!lease) {
      segments.push({ ...b, kind: 'lease', ...interval, label: `${name} busy ${span}`, text: 'busy', href: null, mine: false });
      continue;
    }
    const mine = projectId !== null && lease.project.id === projectId;
    const label = mine ? `${name} ${lease.name} ${span}` : `${name} ${lease.name} by ${lease.project.name} ${span}`;
    const text = mine ? lease.name : `${lease.project.name}: ${lease.name}`;
    segments.push({ ...b, kind: 'lease', ...interval, label, text, href: `/leases/${lease.id}`, mine });
  }
  return { offered, segments };
}

/** The lease request a click on a free slot starts: that node, from that instant (ISO 8601 UTC). */
export function requestHref(node: Pick<AvailabilityNode, 'name' | 'id'>, start: number): string {
  const params = new URLSearchParams({ node: nodeLabel(node), start: new Date(start).toISOString() });
  return `/leases/new?${params.toString()}`;
}
