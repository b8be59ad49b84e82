import { InvalidRequestError } from './errors.js';

/**
 * Durations as users write them: ISO 8601 (`P3D`, `PT10M`, `P1DT12H`, `P2W`) or short (`3d`, `90s`,
 * `1h30m`, `500ms`, `0s`). Months and years are refused: their length depends on the date they start at.
 */
const UNIT_MS = { w: 604_800_000, d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000, ms: 1 } as const;

/**
 * The longest duration accepted anywhere (leases, offers, quotas, token expiry, settings): 10 years, leap days
 * included (P3653D). Without a bound, `100000000d` became a time past JavaScript's and PostgreSQL's ranges and the
 * request failed with a 500 (issue 11); nothing Leasehold schedules is meant to last longer.
 */
export const MAX_DURATION_MS = 3653 * UNIT_MS.d;

/** Longer text cannot be a sensible duration (`P1DT12H30M15.5S` is 15 characters); refused before any regex. */
export const MAX_DURATION_TEXT = 64;

const ISO = /^P(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i;
const SHORT_PART = /(\d+(?:\.\d+)?)(ms|w|d|h|m|s)/gy;

export function parseDuration(text: string, field = 'duration'): number {
  const ms = readDuration(text);
  if (typeof ms === 'number') return ms;
  throw new InvalidRequestError(`${field}: ${JSON.stringify(text)} ${ms.problem}`, {
    details: { field, value: text, ...(ms.tooLong ? { max: formatDuration(MAX_DURATION_MS) } : {}) },
  });
}

/** Why `text` is not an accepted duration ("is not a duration; use ..."), or null when it is one. */
export function durationProblem(text: string): string | null {
  const ms = readDuration(text);
  return typeof ms === 'number' ? null : ms.problem;
}

function readDuration(text: string): number | { readonly problem: string; readonly tooLong: boolean } {
  const value = text.trim();
  const malformed = {
    problem: 'is not a duration; use ISO 8601 like "P3D" or "PT10M", or short like "3d", "90m", "1h30m"',
    tooLong: false,
  };
  if (value === '' || value.length > MAX_DURATION_TEXT) return malformed;
  const ms = parseUnbounded(value);
  if (ms === null) return malformed;
  if (!Number.isFinite(ms) || ms > MAX_DURATION_MS) {
    return { problem: `is longer than ${formatDuration(MAX_DURATION_MS)} (10 years), the longest duration accepted`, tooLong: true };
  }
  return ms;
}

function parseUnbounded(value: string): number | null {
  if (/^p/i.test(value)) {
    const m = ISO.exec(value);
    if (!m || value.toUpperCase() === 'P' || value.toUpperCase().endsWith('T')) return null;
    const [, w, d, h, min, s] = m;
    const ms =
      num(w) * UNIT_MS.w + num(d) * UNIT_MS.d + num(h) * UNIT_MS.h + num(min) * UNIT_MS.m + num(s) * UNIT_MS.s;
    return Math.round(ms);
  }
  SHORT_PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  for (let m = SHORT_PART.exec(value); m; m = SHORT_PART.exec(value)) {
    total += Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
    consumed = SHORT_PART.lastIndex;
  }
  if (consumed !== value.length) return null;
  return Math.round(total);
}

function num(part: string | undefined): number {
  return part === undefined ? 0 : Number(part);
}

/** Formats milliseconds as ISO 8601 (`P3DT4H`), the form the API returns. */
export function formatDuration(ms: number): string {
  if (ms === 0) return 'PT0S';
  let rest = ms;
  const days = Math.floor(rest / UNIT_MS.d);
  rest -= days * UNIT_MS.d;
  const hours = Math.floor(rest / UNIT_MS.h);
  rest -= hours * UNIT_MS.h;
  const minutes = Math.floor(rest / UNIT_MS.m);
  rest -= minutes * UNIT_MS.m;
  const seconds = rest / UNIT_MS.s;
  let out = 'P';
  if (days) out += `${days}D`;
  if (hours || minutes || seconds) {
    out += 'T';
    if (hours) out += `${hours}H`;
    if (minutes) out += `${minutes}M`;
    if (seconds) out += `${Number(seconds.toFixed(3))}S`;
  }
  return out;
}
