import { formatDuration } from './duration.js';
import { InvalidRequestError } from './errors.js';

/**
 * Notices before a lease's end (issue 16, item 3): `lease.ending_soon` at each offset before the end, once per
 * lease, offset and end. Pure: the store records what was sent (queries/lease-notices.ts), the engine asks what is
 * due (engine/lease-timekeeper.ts), the API, the CLI and the web UI show the same instants from `noticeSchedule`.
 */

/** The operator's default when LEASEHOLD_NOTICE_OFFSETS is unset: a day and an hour before the end. */
export const DEFAULT_NOTICE_OFFSETS_MS: readonly number[] = [86_400_000, 3_600_000];

/** More offsets than anyone reads: a longer list is a mistake (each one is a row and an event per lease). */
export const MAX_NOTICE_OFFSETS = 10;

export interface NoticeLease {
  readonly start: Date;
  readonly end: Date;
}

export interface NoticeEntry {
  /** How long before the end (ms). */
  readonly offset_ms: number;
  /**
   * When it is due: `end - offset`, or the start when that is earlier (a lease shorter than the offset hears it
   * as it begins, not before it has begun).
   */
  readonly at: Date;
  /** When it was sent for this end, or null while it is still to come. */
  readonly sent_at: Date | null;
}

/** Offsets as a project or the operator gives them: positive, distinct, largest first (the order they fall due). */
export function normalizeOffsets(offsets: readonly number[], field = 'notice_offsets'): number[] {
  if (offsets.length > MAX_NOTICE_OFFSETS) {
    throw new InvalidRequestError(`${field}: at most ${MAX_NOTICE_OFFSETS} offsets`, { details: { field } });
  }
  for (const ms of offsets) {
    if (!Number.isFinite(ms) || ms <= 0) {
      throw new InvalidRequestError(`${field}: every offset must be longer than zero`, { details: { field, value: formatDuration(Math.max(0, ms)) } });
    }
  }
  return [...new Set(offsets)].sort((a, b) => b - a);
}

/** When the notice `offsetMs` before the end of `lease` is due. */
export function noticeAt(lease: NoticeLease, offsetMs: number): Date {
  return new Date(Math.max(lease.end.getTime() - offsetMs, lease.start.getTime()));
}

/** Every notice of the lease's current end, in the order they fall due, with when each was sent (by offset). */
export function noticeSchedule(lease: NoticeLease, offsets: readonly number[], sent: ReadonlyMap<number, Date>): NoticeEntry[] {
  return normalizeOffsets(offsets).map((offset_ms) => ({ offset_ms, at: noticeAt(lease, offset_ms), sent_at: sent.get(offset_ms) ?? null }));
}

export interface DueNotices {
  /** Every offset due now and not sent for this end: all are recorded as sent. */
  readonly offsets: readonly number[];
  /** The one the event announces: the nearest to the end (several due at once are one message, not a burst). */
  readonly announce: number;
}

/**
 * Which notices of a lease are due at `now` and not sent yet for its current end: none once the lease has ended
 * (a notice after the end would be a lie) or while it has not started.
 */
export function dueNotices(lease: NoticeLease, offsets: readonly number[], sent: ReadonlySet<number>, now: Date): DueNotices | null {
  const t = now.getTime();
  if (t >= lease.end.getTime() || t < lease.start.getTime()) return null;
  const due = normalizeOffsets(offsets).filter((o) => !sent.has(o) && noticeAt(lease, o).getTime() <= t);
  if (due.length === 0) return null;
  return { offsets: due, announce: Math.min(...due) };
}

/** "2h 5m", "3d 4h", "45s": how long until `end`, the way the CLI and the web UI say "ends in ...". */
export function formatEndsIn(ms: number): string {
  if (ms <= 0) return 'now';
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return h > 0 ? `${d}d ${h}h` : `${d}d`;
  if (h > 0) return m > 0 ? `${h}h ${m}m` : `${h}h`;
  if (m > 0) return `${m}m`;
  return `${s}s`;
}
