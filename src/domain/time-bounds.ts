import { formatDuration, MAX_DURATION_MS } from './duration.js';
import { InvalidRequestError } from './errors.js';

/**
 * The instants Leasehold accepts. Any timestamp: from 1970-01-01 to the end of year 9999 (what RFC 3339 can write
 * with four digits; an offset like -23:59 would otherwise carry 9999-12-31 into year 10000). A time that books
 * something — a lease's start and end, an offer's window, a token's expiry — must also lie within 10 years of now
 * (MAX_DURATION_MS): `9999-12-31` as a lease start was accepted and left a lease pending for 8,000 years (issue 11).
 */
export const TIME_BOUNDS = {
  earliestMs: Date.UTC(1970, 0, 1),
  latestMs: Date.UTC(9999, 11, 31, 23, 59, 59, 999),
  horizonMs: MAX_DURATION_MS,
} as const;

/** True when `ms` is a real instant from 1970 to the end of 9999. */
export function isAcceptedInstant(ms: number): boolean {
  return Number.isFinite(ms) && ms >= TIME_BOUNDS.earliestMs && ms <= TIME_BOUNDS.latestMs;
}

/** Refuses a time more than 10 years before or after `now`, naming the field (a 400). */
export function checkWithinHorizon(at: Date, now: Date, field: string): void {
  const earliest = new Date(now.getTime() - TIME_BOUNDS.horizonMs);
  const latest = new Date(now.getTime() + TIME_BOUNDS.horizonMs);
  const ms = at.getTime();
  if (Number.isFinite(ms) && ms >= earliest.getTime() && ms <= latest.getTime()) return;
  const when = Number.isFinite(ms) ? at.toISOString() : 'the time';
  const span = `${formatDuration(TIME_BOUNDS.horizonMs)} (10 years)`;
  const problem = ms < earliest.getTime() ? `is in the past, more than ${span} before now` : `is more than ${span} from now`;
  throw new InvalidRequestError(
    `${field}: ${when} ${problem}; give a time from ${earliest.toISOString()} to ${latest.toISOString()}`,
    { details: { field, earliest: earliest.toISOString(), latest: latest.toISOString() } },
  );
}
