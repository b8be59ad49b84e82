import { InvalidArgumentError } from 'commander';
import { formatDuration, parseDuration } from '../domain/duration.js';

/**
 * Option-value parsers for commander. They throw InvalidArgumentError, which commander reports as
 * "error: option '--port <n>' argument '70000' is invalid. ..." and which `run` turns into exit code 2.
 */

function integer(text: string, min: number, max: number, what: string): number {
  if (!/^\d+$/.test(text.trim())) throw new InvalidArgumentError(`${what} must be a whole number from ${min} to ${max}.`);
  const value = Number(text.trim());
  if (value < min || value > max) throw new InvalidArgumentError(`${what} must be from ${min} to ${max}.`);
  return value;
}

export function parsePort(text: string): number {
  return integer(text, 0, 65_535, 'The port');
}

/** Page size: the server accepts 1..1000. */
export function parseLimit(text: string): number {
  return integer(text, 1, 1000, 'The page size');
}

/**
 * "none" (no limit) comes back as UNLIMITED, not null, because commander turns a parser's null into ''.
 * Commands send it as null.
 */
export const UNLIMITED = 'none';

/** `--max-nodes 10` or `--max-nodes none`. */
export function parseCountOrNone(text: string): number | typeof UNLIMITED {
  if (text.trim().toLowerCase() === 'none') return UNLIMITED;
  return integer(text, 0, 1_000_000, 'The count');
}

/** `--max-node-hours 5000` or `none`: node-hours per calendar month (the API's bound: a million nodes all month). */
export function parseNodeHoursOrNone(text: string): number | typeof UNLIMITED {
  if (text.trim().toLowerCase() === 'none') return UNLIMITED;
  return integer(text, 0, 744_000_000, 'The node-hours');
}

/** `--max-lease-duration 5d|P5D|none`: checked here so a typo never reaches the server; ISO 8601 or UNLIMITED. */
export function parseDurationOrNone(text: string): string {
  if (text.trim().toLowerCase() === 'none') return UNLIMITED;
  return formatDuration(durationMs(text));
}

/** A duration in milliseconds (`30d`, `12h`, `P1W`), greater than zero. */
export function parsePositiveDuration(text: string): number {
  const ms = durationMs(text);
  if (ms <= 0) throw new InvalidArgumentError('The duration must be longer than zero.');
  return ms;
}

function durationMs(text: string): number {
  try {
    return parseDuration(text);
  } catch {
    throw new InvalidArgumentError('Use a duration like 5d, 12h, 1h30m or ISO 8601 like P5D, or none.');
  }
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * An RFC 3339 timestamp with an explicit offset, so no one's local time zone is guessed; sent in UTC, the form
 * the API uses everywhere.
 */
export function parseTimestamp(text: string): string {
  const value = text.trim();
  const [year = 0, month = 0, day = 0] = value.slice(0, 10).split('-').map(Number);
  // Date.parse rolls 2030-02-31 over to March instead of refusing it.
  const realDay = day >= 1 && day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (!RFC3339.test(value) || !realDay || Number.isNaN(Date.parse(value))) {
    throw new InvalidArgumentError('Use an RFC 3339 time with a zone, like 2030-01-31T18:00:00Z.');
  }
  return new Date(value).toISOString();
}

/** A duration sent to the API: checked here, sent as ISO 8601 (`5d` becomes `P5D`). Must be longer than zero. */
export function parseIsoDuration(text: string): string {
  return formatDuration(parsePositiveDuration(text));
}

/** Collects a repeatable option's values: `--allow a --allow b`. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

export interface Need {
  readonly count: number;
  readonly where: string;
}

const NEED_USE = "Use COUNT:EXPRESSION, e.g. '3:memory >= 48GiB and gpus >= 1'";

/** `--need '3:memory >= 48GiB and gpus >= 1'`: how many nodes, and what each must have. Repeatable. */
export function parseNeed(text: string): Need {
  const colon = text.indexOf(':');
  if (colon < 0) throw new InvalidArgumentError(`${NEED_USE}: the count and the colon are missing.`);
  const count = text.slice(0, colon).trim();
  const where = text.slice(colon + 1).trim();
  if (!/^\d+$/.test(count) || Number(count) < 1 || !Number.isSafeInteger(Number(count))) {
    throw new InvalidArgumentError(`${NEED_USE}: the count must be a whole number from 1.`);
  }
  if (where === '') throw new InvalidArgumentError(`${NEED_USE}: the expression after the colon is empty.`);
  return { count: Number(count), where };
}

export function collectNeed(value: string, previous: Need[] | undefined): Need[] {
  return [...(previous ?? []), parseNeed(value)];
}
