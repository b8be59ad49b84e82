import type { Offer } from '../leasing.js';
import type { Interval } from './interval.js';
import { expandWeekly, weeklyCovers, weeklyRunEnd } from './weekly-windows.js';

/**
 * Where an offer makes its node available: its period, and within it its weekly windows when it has any
 * (weekly-windows.ts). What planning, extensions, free windows and the earliest-start search ask of an offer.
 */

type OfferTimes = Pick<Offer, 'start' | 'end' | 'weekly'>;

/** How far ahead the end of a weekly stretch is looked for: a lease is never longer than a year ahead anyway. */
const STRETCH_LOOKAHEAD_MS = 366 * 86_400_000;

/** Whether the offer covers the whole of `window`: inside its period and inside one of its weekly windows. */
export function offerCovers(offer: OfferTimes, window: Interval): boolean {
  if (offer.start.getTime() > window.start) return false;
  if (offer.end !== null && offer.end.getTime() < window.end) return false;
  return !offer.weekly || weeklyCovers(offer.weekly, window);
}

/**
 * The offer's available intervals within `range`, sorted and merged. A weekly offer needs a finite range end
 * (a RangeError otherwise): its windows go on for ever.
 */
export function offerIntervals(offer: OfferTimes, range: Interval): readonly Interval[] {
  const start = Math.max(offer.start.getTime(), range.start);
  const end = Math.min(offer.end === null ? Infinity : offer.end.getTime(), range.end);
  if (end <= start) return [];
  return offer.weekly ? expandWeekly(offer.weekly, { start, end }) : [{ start, end }];
}

/**
 * The end of the stretch of availability that `at` lies in: the offer's end, or sooner the end of its weekly
 * window (Infinity: open-ended, no weekly rules). `at` itself when a weekly offer is not available then.
 */
export function offerStretchEnd(offer: OfferTimes, at: number): number {
  const end = offer.end === null ? Infinity : offer.end.getTime();
  if (!offer.weekly) return end;
  const run = weeklyRunEnd(offer.weekly, at, STRETCH_LOOKAHEAD_MS);
  return Math.min(end, run === at + STRETCH_LOOKAHEAD_MS ? Infinity : run);
}
