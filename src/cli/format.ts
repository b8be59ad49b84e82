import { NONE } from './output.js';

/** Value formatting shared by the tables: sizes, dates, quotas. Sizes are floored so a table never overstates. */

const GIB = 2 ** 30;
const MIB = 2 ** 20;
const DECIMAL_UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB', 'EB'] as const;

/** Memory in GiB (the unit Ironic's memory_mb and requests like `memory >= 48GiB` think in). */
export function formatMemory(bytes: unknown): string {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return NONE;
  if (bytes > 0 && bytes < GIB) return `${Math.floor(bytes / MIB)} MiB`;
  return `${floorTo(bytes / GIB, 1)} GiB`;
}

/** Disk in decimal GB/TB with three significant digits, the units of `disk >= 1TB`. */
export function formatDisk(bytes: unknown): string {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return NONE;
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < DECIMAL_UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : 2;
  return `${floorTo(value, digits)} ${DECIMAL_UNITS[unit]}`;
}

function floorTo(value: number, digits: number): number {
  const scale = 10 ** digits;
  // The epsilon keeps 1.1 * 10 = 10.999999 from flooring to 1.0.
  return Math.floor(value * scale + 1e-9) / scale;
}

/** A number, or a dash when the node does not say. */
export function formatCount(value: unknown): string {
  return typeof value === 'number' || typeof value === 'string' ? String(value) : NONE;
}

export function formatBool(value: unknown): string {
  return value === true ? 'yes' : value === false ? 'no' : NONE;
}

/** `name (id)` when both are known, so people see the name and can still paste the id. */
export function nameAndId(ref: { id: string; name: string } | null | undefined, raw?: string | null): string {
  if (ref) return `${ref.name} (${ref.id})`;
  return raw ?? NONE;
}

export function formatLimit(value: number | string | null | undefined): string {
  return value === null || value === undefined ? 'unlimited' : String(value);
}

/** The first 8 characters of a uuid: enough to tell rows apart in a table, short enough to fit. */
export function shortId(id: string | null | undefined): string {
  return id ? id.slice(0, 8) : NONE;
}

/** An end time, or "open" when there is none. */
export function formatEnd(end: string | null | undefined): string {
  return end ?? 'open';
}

/** A window as `start → end`; a start already past is "now", a missing end "open". */
export function formatWindow(window: { start: string; end: string | null }, now: Date): string {
  const start = Date.parse(window.start) <= now.getTime() ? 'now' : window.start;
  return `${start} → ${formatEnd(window.end)}`;
}

/** Milliseconds as people write them on the command line: 10m, 1h30m, 3d. */
export function formatShortDuration(ms: number): string {
  const units: [string, number][] = [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1_000]];
  let rest = Math.round(ms);
  let out = '';
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  if (rest > 0 || out === '') out += `${rest}ms`;
  return out;
}
