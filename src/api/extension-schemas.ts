import { z } from '@hono/zod-openapi';
import { formatDuration, parseDuration } from '../domain/duration.js';
import { InvalidRequestError } from '../domain/errors.js';
import type { Offer } from '../domain/leasing.js';
import type { AutoRenew } from '../domain/auto-renew.js';
import type { NoticeEntry } from '../domain/notices.js';
import { DurationInput, TimeInput } from './schemas.js';

/**
 * Issue 16's items 3 and 4 in the API: an offer's extension policy (the fields of POST /v1/offers and of the Offer,
 * kept here so offers.ts only spreads them in; the rules are domain/scheduling/extension-policy.ts), a lease's
 * auto-renew and its notices before the end.
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

/** A lease's auto-renew as asked (POST /v1/leases, PATCH /v1/leases/{id}); null in a PATCH turns it off. */
export const AutoRenewInput = z
  .object({
    step: DurationInput.openapi({ description: 'How much each renewal adds ("P1D"). A renewal is tried once at most one step is left.' }),
    until: TimeInput.optional().openapi({ description: 'Never renewed past this instant (RFC 3339).' }),
    max_total: DurationInput.optional().openapi({ description: 'Instead of until: never longer than this in total, from its start.' }),
  })
  .strict()
  .refine((a) => (a.until === undefined) !== (a.max_total === undefined), { message: 'give `until` or `max_total`, one of them', path: ['until'] })
  // Inline, not a named component: a named one loses `null` in PATCH's `auto_renew: null` in the generated types.
  .openapi({
    description:
      'The engine extends the lease by `step` while its nodes stay free and the offers allow it (`lease.renewed` each time); when a rule ' +
      'refuses, it stops and says which (`lease.renewal_failed`, once).',
  });

export const AutoRenewOut = z
  .object({
    step: z.string(),
    until: z.string(),
    state: z.enum(['on', 'done', 'stopped']).openapi({ description: '`on` while renewing; `done` at `until`; `stopped` when a rule refused a step.' }),
    rule: z.string().nullable().openapi({ description: 'The rule that stopped it (see GET /v1/leases/{id}/extension), or null.' }),
    message: z.string().nullable(),
  })
  .openapi('AutoRenew');

export const NoticeOut = z
  .object({
    offset: z.string().openapi({ description: 'How long before the end (ISO 8601).' }),
    at: z.string().openapi({ description: 'When `lease.ending_soon` is due for the current end (never before the start).' }),
    sent_at: z.string().nullable().openapi({ description: 'When it was sent for the current end; null: still to come.' }),
  })
  .openapi('Notice');

/** The lessee's auto-renew ask in ms, `until` resolved against the lease's start (max_total). */
export function parseAutoRenew(body: z.infer<typeof AutoRenewInput>, start: Date): { step_ms: number; until: Date } {
  const step = parseDuration(body.step, 'auto_renew.step');
  if (step <= 0) throw new InvalidRequestError('auto_renew.step must be longer than zero', { details: { field: 'auto_renew.step' } });
  const until = body.until !== undefined ? new Date(body.until) : new Date(start.getTime() + parseDuration(body.max_total!, 'auto_renew.max_total'));
  return { step_ms: step, until };
}

export function autoRenewJson(a: AutoRenew | null) {
  return a === null ? null : { step: formatDuration(a.step_ms), until: a.until.toISOString(), state: a.state, rule: a.rule, message: a.message };
}

export function noticesJson(entries: readonly NoticeEntry[]) {
  return entries.map((n) => ({ offset: formatDuration(n.offset_ms), at: n.at.toISOString(), sent_at: n.sent_at?.toISOString() ?? null }));
}
