import { useState } from 'react';
import type { Api, Lease } from '../api/client';
import { unwrap } from '../api/errors';
import { formatTime } from '../lib/format';
import { useAction } from '../lib/use-action';
import { shortDuration } from './duration';
import { ErrorNotice } from './error-notice';

type Quote = { latest_end: string | null; extendable: boolean; limited_by: { rule: string; node_name: string | null; node_id: string | null } | null; window: { open: boolean; opens_at: string | null } };

/** The rules' names as sentences (GET /v1/leases/{id}/extension's `limited_by.rule`). */
export const RULE_TEXT: Readonly<Record<string, string>> = {
  extension_window: "the offer's extension window",
  extension_max_ahead: 'how far ahead the offer lets you extend',
  max_total_length: "the offer's limit on a lease's total length",
  max_lease_length: "the offer's longest lease",
  offer_end: 'the end of the offer',
  next_booking: 'the next lease on the node',
  project_max_lease_duration: "your project's longest lease",
};

/**
 * How far the lease could be extended now (asked on demand: it reads every node's offers and bookings), and its
 * auto-renew: shown, turned on with a step and a total, or off.
 */
export function LeaseRenewal({ api, lease, canChange, onChanged }: { api: Api; lease: Lease; canChange: boolean; onChanged: () => void }) {
  const [quote, setQuote] = useState<Quote | null>(null);
  const [step, setStep] = useState('P1D');
  const [total, setTotal] = useState('P14D');
  const ask = useAction();
  const save = useAction();
  const renew = lease.auto_renew ?? null;
  const check = () =>
    ask.run(async () => {
      setQuote(unwrap(await api.GET('/v1/leases/{id}/extension', { params: { path: { id: lease.id } } })));
    });
  const patch = (auto_renew: { step: string; max_total: string } | null) =>
    save.run(async () => {
      unwrap(await api.PATCH('/v1/leases/{id}', { params: { path: { id: lease.id } }, body: { auto_renew } }));
      onChanged();
      return auto_renew ? 'Auto-renew is on.' : 'Auto-renew is off.';
    });
  return (
    <div className="lease-renewal">
      <p>
        {renew ? (
          <span>
            Auto-renew {renew.state === 'on' ? 'on' : renew.state === 'done' ? 'done' : 'stopped'}: +{shortDuration(renew.step)} at a time until{' '}
            <span title={renew.until}>{formatTime(renew.until)}</span>
            {renew.state === 'stopped' && <span className="warn" role="note"> — stopped by {RULE_TEXT[renew.rule ?? ''] ?? renew.rule}: {renew.message}</span>}
          </span>
        ) : (
          <span className="muted">No auto-renew.</span>
        )}{' '}
        {canChange && renew && <button type="button" className="secondary small" disabled={save.busy} onClick={() => void patch(null)}>Turn auto-renew off</button>}
      </p>
      {canChange && (
        <form className="row" aria-label="Auto-renew" onSubmit={(e) => { e.preventDefault(); void patch({ step, max_total: total }); }}>
          <label>Step <input value={step} onChange={(e) => setStep(e.target.value)} size={6} /></label>
          <label>At most in total <input value={total} onChange={(e) => setTotal(e.target.value)} size={6} /></label>
          <button type="submit" disabled={save.busy}>{renew ? 'Change auto-renew' : 'Turn auto-renew on'}</button>
        </form>
      )}
      {save.done && <p className="small ok" role="status">{save.done}</p>}
      {save.error !== undefined && <ErrorNotice error={save.error} />}
      <p>
        <button type="button" className="secondary small" disabled={ask.busy} onClick={() => void check()}>How far can it be extended?</button>
      </p>
      {quote && (
        <p role="status" className="small">
          {quote.extendable && quote.latest_end ? <>Up to <span title={quote.latest_end}>{formatTime(quote.latest_end)}</span></> : quote.latest_end === null ? 'No limit' : 'Not now'}
          {quote.limited_by && <>, limited by {RULE_TEXT[quote.limited_by.rule] ?? quote.limited_by.rule}{quote.limited_by.node_name ? ` (${quote.limited_by.node_name})` : ''}</>}
          {!quote.window.open && quote.window.opens_at && <>; the extension window opens <span title={quote.window.opens_at}>{formatTime(quote.window.opens_at)}</span></>}.
        </p>
      )}
      {ask.error !== undefined && <ErrorNotice error={ask.error} />}
    </div>
  );
}
