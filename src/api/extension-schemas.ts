import { z } from '@hono/zod-openapi';
import { formatDuration, parseDuration } from '../domain/duration.js';
import { InvalidRequestError } from '../domain/errors.js';
import type { Offer } from '../domain/leasing.js';
import { DurationInput } from './schemas.js';

/**
 * An offer's extension policy (issue 16, item 4) in the API: the fields of POST /v1/offers and of the Offer, kept
 * here so offers.ts only spreads them in. The rules they set are in domain/scheduling/extension-policy.ts.
 */
export const ExtensionPolicyFields = {
  extension_window: DurationInput.optional().openapi({
    description:
      'The lessee may extend a lease only within this long of its end ("P2D": from 48 h before the end); refused earlier with ' +
      '409 policy_violation, error.details.rule "extension_window". Default: any time.',
  }),
  extension_max_ahead: DurationInput.optional().openapi({
    description: 'An extension reaches at most this far from now ("P7D"): rule "extension_max_ahead". Default: no such limit.',
  }),
  max_total_length: DurationInput.optional().openapi({
    description:
      'A hard limit on the whole lease, start to end, after any extension: rule "max_total_length". With it, max_lease_duration bounds ' +
      'the lease as booked, and extensions may go beyond it up to this.',
  }),
};

export const ExtensionPolicyOut = {
  extension_window: z.string().nullable().openapi({ description: 'Extension only within this long of the end; null: any time.' }),
  extension_max_ahead: z.string().nullable().openapi({ description: 'An extension reaches at most this far from now; null: no limit.' }),
  max_total_length: z.string().nullable().openapi({ description: 'The longest a lease may become by extensions; null: max_lease_duration.' }),
};

type PolicyBody = { extension_window?: string; extension_max_ahead?: string; max_total_length?: string };

/** The offer's extension fields in ms, refusing zero lengths and a total shorter than the longest booking. */
export function parseExtensionPolicy(body: PolicyBody, maxLeaseMs: number | null): Pick<Offer, 'extension_window_ms' | 'extension_max_ahead_ms' | 'max_total_ms'> {
  const read = (field: keyof PolicyBody): number | null => {
    const text = body[field];
    if (text === undefined) return null;
    const ms = parseDuration(text, field);
    if (ms <= 0) throw new InvalidRequestError(`${field} must be longer than zero`, { details: { field } });
    return ms;
  };
  const total = read('max_total_length');
  if (total !== null && maxLeaseMs !== null && total < maxLeaseMs) {
    throw new InvalidRequestError('max_total_length is shorter than max_lease_duration', { details: { field: 'max_total_length' } });
  }
  return { extension_window_ms: read('extension_window'), extension_max_ahead_ms: read('extension_max_ahead'), max_total_ms: total };
}

export function extensionPolicyJson(o: Pick<Offer, 'extension_window_ms' | 'extension_max_ahead_ms' | 'max_total_ms'>) {
  const d = (ms: number | null) => (ms === null ? null : formatDuration(ms));
  return { extension_window: d(o.extension_window_ms), extension_max_ahead: d(o.extension_max_ahead_ms), max_total_length: d(o.max_total_ms) };
}
