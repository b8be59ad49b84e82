import { useState } from 'react';
import type { Api, Lease } from '../api/client';
import { unwrap } from '../api/errors';
import { formatTime } from '../lib/format';
import { useAction } from '../lib/use-action';
import { ConfirmButton } from './confirm-button';
import { ErrorNotice } from './error-notice';

const HOUR = 3_600_000;
const QUICK = [
  { label: '+1 hour', ms: HOUR },
  { label: '+1 day', ms: 24 * HOUR },
  { label: '+3 days', ms: 72 * HOUR },
];

/** An instant as the value of <input type="datetime-local"> (local time, minutes). */
export function toLocalInput(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** Extend (or shorten) and cancel: the API decides whether it fits (offers, policy, quota, the next lease). */
export function LeaseActions({ api, lease, onChanged }: { api: Api; lease: Lease; onChanged: (lease: Lease) => void }) {
  const [newEnd, setNewEnd] = useState(() => toLocalInput(Date.parse(lease.end) + 24 * HOUR));
  const action = useAction();
  const parsed = Date.parse(newEnd); // datetime-local values parse as local time
  const valid = !Number.isNaN(parsed);

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
        <div className="field">
          <label htmlFor="lease-new-end">New end (your local time)</label>
          <input
            id="lease-new-end"
            type="datetime-local"
            value={newEnd}
            min={toLocalInput(Date.now())}
            onChange={(e) => setNewEnd(e.target.value)}
          />
        </div>
        <div className="row" role="group" aria-label="Quick extensions">
          {QUICK.map((q) => (
            <button key={q.label} type="button" className="secondary small" onClick={() => setNewEnd(toLocalInput(Date.parse(lease.end) + q.ms))}>
              {q.label}
            </button>
          ))}
        </div>
      </div>
      <div className="row">
        <ConfirmButton
          className=""
          label={valid && parsed < Date.parse(lease.end) ? 'Shorten' : 'Extend'}
          question={valid ? `Change the end to ${formatTime(new Date(parsed).toISOString())}?` : 'Choose a new end first.'}
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
      {action.error !== undefined && <ErrorNotice error={action.error} />}
    </section>
  );
}
