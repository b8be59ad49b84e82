import { Option, type Command } from 'commander';
import { formatDuration } from '../../domain/duration.js';
import { formatEndsIn } from '../../domain/notices.js';
import type { Lease } from '../api-types.js';
import { UsageError } from '../errors.js';
import type { Cell } from '../output.js';
import { parsePositiveDuration, parseTimestamp } from '../parsers.js';

/** A lease's time as the CLI shows it (issue 16): "ends in", its notices, its auto-renew; the auto-renew flags. */

const FINISHED: ReadonlySet<string> = new Set(['ending', 'ended', 'cancelled', 'failed']);

/** "ends in 3d 4h" for a lease still running or to come, else null (the API's end, the same instant everywhere). */
export function endsIn(l: Pick<Lease, 'end' | 'state'>, now: Date): string | null {
  if (FINISHED.has(l.state)) return null;
  return formatEndsIn(Date.parse(l.end) - now.getTime());
}

/** The lease's notices, one line each: when, how long before the end, and whether it was sent. */
export function noticeLines(l: Pick<Lease, 'notices'>): string | null {
  if (l.notices.length === 0) return null;
  return l.notices.map((n) => `${n.offset} before: ${n.sent_at ? `sent ${n.sent_at}` : `due ${n.at}`}`).join('\n');
}

/** The lease's auto-renew as a person reads it. */
export function autoRenewText(l: Pick<Lease, 'auto_renew'>): string | null {
  const a = l.auto_renew;
  if (!a) return null;
  const base = `${a.state}: +${a.step} at a time until ${a.until}`;
  return a.state === 'stopped' ? `${base}\nstopped (${a.rule}): ${a.message}` : base;
}

/** The fields `lease show` adds for the lease's time (issue 16). */
export function leaseTimeFields(l: Lease, now: Date | null): (readonly [string, Cell])[] {
  // Auto-renew only when the lessee asked for it: most leases have none.
  return [...(now ? [['ends in', endsIn(l, now)] as const] : []), ['notices', noticeLines(l)], ...(l.auto_renew ? [['auto-renew', autoRenewText(l)] as const] : [])];
}

export type AutoRenewFlags = { autoRenew?: number; renewUntil?: string; renewMaxTotal?: number };

/** `--auto-renew STEP` with `--renew-until TIME` or `--renew-max-total DURATION` (lease create, lease renew). */
export function autoRenewOptions(command: Command): Command {
  return command
    .addOption(new Option('--auto-renew <step>', 'renew the lease by this much at a time while its nodes stay free, e.g. 1d').argParser(parsePositiveDuration))
    .addOption(new Option('--renew-until <time>', 'never renew past this (RFC 3339)').argParser(parseTimestamp).conflicts('renewMaxTotal'))
    .addOption(new Option('--renew-max-total <duration>', 'never renew past this length in total, e.g. 14d').argParser(parsePositiveDuration));
}

/** The `auto_renew` body from the flags, or undefined when none was given. */
export function autoRenewBody(flags: AutoRenewFlags): Record<string, string> | undefined {
  if (flags.autoRenew === undefined) {
    if (flags.renewUntil !== undefined || flags.renewMaxTotal !== undefined) throw new UsageError('--renew-until and --renew-max-total go with --auto-renew <step>');
    return undefined;
  }
  if (flags.renewUntil === undefined && flags.renewMaxTotal === undefined) throw new UsageError('say how far to renew: --renew-until <time> or --renew-max-total <duration>');
  return {
    step: formatDuration(flags.autoRenew),
    ...(flags.renewUntil !== undefined ? { until: flags.renewUntil } : { max_total: formatDuration(flags.renewMaxTotal!) }),
  };
}
