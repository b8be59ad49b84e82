import { useState } from 'react';
import type { Api, Lease } from '../api/client';
import { unwrap } from '../api/errors';
import { formatTime } from '../lib/format';
import { useAction } from '../lib/use-action';
import { ConfirmButton } from './confirm-button';
import { ErrorNotice } from './error-notice';
import { explainedByFields, fieldErrors } from './field';
import { UtcTimeField, isoToUtcInput, utcInputToIso } from './utc-time';

const HOUR = 3_600_000;
const QUICK = [
  { label: '+1 hour', ms: HOUR },
  { label: '+1 day', ms: 24 * HOUR },
  { label: '+3 days', ms: 72 * HOUR },
];

/** Extend (or shorten) and cancel: the API decides whether it fits (offers, policy, quota, the next lease). */
export function LeaseActions({ api, lease, onChanged }: { api: Api; lease: Lease; onChanged: (lease: Lease) => void }) {
  // In UTC like every time field of the UI (the local time is shown beside it): what the API and the owners' offer
  // windows speak, so "until 18:00" means the same instant to everyone on a shared lease.
  const [newEnd, setNewEnd] = useState(() => isoToUtcInput(Date.parse(lease.end) + 24 * HOUR));
  const action = useAction();
  const iso = utcInputToIso(newEnd);
  const parsed = iso === null ? NaN : Date.parse(iso);
  const valid = iso !== null;

  const extend = () =>
    action.run(async () => {
      const end = new Date(parsed).toISOString();
      const updated = unwrap(await api.PATCH('/v1/leases/{id}', { params: { path: { id: lease.id } }, body: { end } }));
      onChanged(updated);
      return `The lease now ends ${formatTime(updated.end)}.`;
    });
  const cancel = () =>
    action.run(async () => {
      const updated = unwrap(await api.DELETE('/v1/leases/{id}', { params: { path: { id: lease.id } } }));
      onChanged(updated);
      return updated.state === 'cancelled' ? 'The lease is cancelled.' : 'The lease is ending: the nodes are being released.';
    });

  const started = lease.state === 'active';
  return (
    <section className="card actions" aria-labelledby="lease-actions-title">
      <h2 id="lease-actions-title">Change this lease</h2>
      <div className="row">
        <UtcTimeField
          id="lease-new-end"
          label="New end"
          value={newEnd}
          onChange={setNewEnd}
          emptyMeaning="choose a new end"
          error={fieldErrors(action.error).end}
        />
        <div className="row" role="group" aria-label="Quick extensions">
          {QUICK.map((q) => (
            <button key={q.label} type="button" className="secondary small" onClick={() => setNewEnd(isoToUtcInput(Date.parse(lease.end) + q.ms))}>
              {q.label}
            </button>
          ))}
        </div>
      </div>
      <div className="row">
        <ConfirmButton
          className=""
          label={valid && parsed < Date.parse(lease.end) ? 'Shorten' : 'Extend'}
          question={iso ? `Change the end to ${iso.slice(0, 16).replace('T', ' ')} UTC (${formatTime(iso)} your time)?` : 'Choose a new end first.'}
          confirmLabel="Yes, change it"
          disabled={!valid || action.busy}
          onConfirm={extend}
        />
        <ConfirmButton
          danger
          label={started ? 'End lease now' : 'Cancel lease'}
          question={started ? 'End the lease now? Access ends at once and the nodes are wiped.' : 'Cancel this lease? Its nodes go back to the pool.'}
          confirmLabel={started ? 'End it now' : 'Cancel it'}
          disabled={action.busy}
          onConfirm={cancel}
        />
      </div>
      {action.done && <p className="ok" role="status">{action.done}</p>}
      {action.error !== undefined && !explainedByFields(action.error, ['end']) && <ErrorNotice error={action.error} />}
    </section>
  );
}
