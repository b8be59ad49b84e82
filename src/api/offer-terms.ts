import { parseDuration } from '../domain/duration.js';
import { InvalidRequestError } from '../domain/errors.js';
import { formatWeeklyRule, parseWeeklySchedule, type WeeklySchedule } from '../domain/scheduling/weekly-windows.js';
import { checkWithinHorizon } from '../domain/time-bounds.js';
import { parseExtensionPolicy } from './extension-schemas.js';

/** The terms of an owner's offer as the request gave them, one node or many (the node itself aside). */
export interface OfferTermsBody {
  readonly start?: string;
  readonly end?: string;
  readonly max_lease_duration?: string;
  readonly min_lease_duration?: string;
  readonly reclaim_notice?: string;
  readonly price_per_node_hour?: string;
  readonly currency?: string;
  readonly extension_window?: string;
  readonly extension_max_ahead?: string;
  readonly max_total_length?: string;
  readonly weekly?: readonly string[];
  readonly timezone?: string;
}

export interface OfferTerms {
  readonly start: Date;
  readonly end: Date | null;
  readonly max_lease_ms: number | null;
  readonly min_lease_ms: number | null;
  readonly reclaim_notice_ms: number | null;
  readonly price_per_node_hour: string | null;
  readonly currency: string | null;
  readonly extension_window_ms: number | null;
  readonly extension_max_ahead_ms: number | null;
  readonly max_total_ms: number | null;
  readonly weekly: WeeklySchedule | null;
}

/** The weekly windows of a request: none, or rules with a timezone (UTC by default); a timezone alone is a 400. */
export function weeklyTerms(body: Pick<OfferTermsBody, 'weekly' | 'timezone'>): WeeklySchedule | null {
  if (body.weekly === undefined) {
    if (body.timezone !== undefined) throw new InvalidRequestError('timezone goes with weekly rules', { details: { field: 'timezone' } });
    return null;
  }
  return parseWeeklySchedule(body.weekly, body.timezone);
}

/**
 * An owner's offer terms checked before anything is looked up or written (each a 400 naming its field): the window
 * within 10 years and ending in the future, the lease lengths, the reclaim notice, price with currency, the
 * extension policy, the weekly windows. The same for one node and for many.
 */
export function parseOfferTerms(body: OfferTermsBody, now: Date): OfferTerms {
  const start = body.start ? new Date(body.start) : now;
  const end = body.end ? new Date(body.end) : null;
  checkWithinHorizon(start, now, 'start');
  if (end) checkWithinHorizon(end, now, 'end');
  if (end && end.getTime() <= Math.max(start.getTime(), now.getTime())) {
    throw new InvalidRequestError('end must be after start and in the future', { details: { field: 'end' } });
  }
  const max = body.max_lease_duration === undefined ? null : parseDuration(body.max_lease_duration, 'max_lease_duration');
  const min = body.min_lease_duration === undefined ? null : parseDuration(body.min_lease_duration, 'min_lease_duration');
  if (max !== null && max <= 0) throw new InvalidRequestError('max_lease_duration must be longer than zero', { details: { field: 'max_lease_duration' } });
  if (max !== null && min !== null && min > max) {
    throw new InvalidRequestError('min_lease_duration is longer than max_lease_duration', { details: { field: 'min_lease_duration' } });
  }
  const reclaim = body.reclaim_notice === undefined ? null : parseDuration(body.reclaim_notice, 'reclaim_notice');
  if ((body.price_per_node_hour === undefined) !== (body.currency === undefined)) {
    const field = body.currency === undefined ? 'currency' : 'price_per_node_hour';
    throw new InvalidRequestError('price_per_node_hour and currency go together', { details: { field } });
  }
  const extension = parseExtensionPolicy(body, max);
  return {
    start,
    end,
    max_lease_ms: max,
    min_lease_ms: min,
    reclaim_notice_ms: reclaim,
    price_per_node_hour: body.price_per_node_hour ?? null,
    currency: body.currency ?? null,
    ...extension,
    weekly: weeklyTerms(body),
  };
}

/** The weekly windows in an offer's audit event, when it has any. */
export function weeklyDetails(terms: Pick<OfferTerms, 'weekly'>): Record<string, unknown> {
  return terms.weekly ? { weekly: terms.weekly.rules.map(formatWeeklyRule), timezone: terms.weekly.timezone } : {};
}
