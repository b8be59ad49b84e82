import { useState } from 'react';
import { Link } from 'wouter';
import type { Api, Schemas } from '../api/client';
import { unwrap } from '../api/errors';
import { formatTime, shortId } from '../lib/format';
import { useAction } from '../lib/use-action';
import { ConfirmButton } from './confirm-button';
import { ErrorNotice } from './error-notice';
import { fieldErrors } from './field';
import { UtcTimeField, utcInputToIso } from './utc-time';

type Reclaim = Schemas['Reclaim'];

/**
 * The owner takes the node back from its leases at an instant, with the notice its offers promised: each lease past
 * that instant gets an equivalent node from then, or the node simply leaves it; the node's offers end then. Too
 * early, or a lease booked under an offer without a reclaim notice, and the API names the lease and the rule.
 */
export function NodeReclaim({ api, nodeId, nodeName }: { api: Api; nodeId: string; nodeName: string }) {
  const [at, setAt] = useState('');
  const [result, setResult] = useState<Reclaim | null>(null);
  const action = useAction();
  const iso = utcInputToIso(at);
  const reclaim = () =>
    action.run(async () => {
      if (!iso) return;
      const done = unwrap(await api.POST('/v1/nodes/{id}/reclaim', { params: { path: { id: nodeId } }, body: { at: iso } }));
      setResult(done);
      return done.leases.length === 0
        ? `No lease holds ${nodeName} after ${formatTime(done.at)}; its offers end then.`
        : `${nodeName} leaves ${done.leases.length === 1 ? 'its lease' : `${done.leases.length} leases`} at ${formatTime(done.at)}; each lease is told.`;
    });
  return (
    <section className="card" aria-labelledby="reclaim-title" style={{ marginTop: '1.5rem' }}>
      <h2 id="reclaim-title" style={{ marginTop: 0 }}>Take this node back</h2>
      <p className="small muted">
        Only from leases booked under an offer with a reclaim notice, and at least that notice from now. Each lease gets an equivalent node from
        then where one is free.
      </p>
      <div className="row" style={{ alignItems: 'flex-end' }}>
        <UtcTimeField id="reclaim-at" label="Leaves its leases at" value={at} onChange={setAt} emptyMeaning="choose an instant" error={fieldErrors(action.error).at} />
        <ConfirmButton
          danger
          label="Take it back"
          question={iso ? `Take ${nodeName} back from its leases at ${formatTime(iso)}?` : 'Choose when first.'}
          confirmLabel="Take it back"
          disabled={!iso || action.busy}
          onConfirm={reclaim}
        />
      </div>
      {action.done && <p className="ok" role="status">{action.done}</p>}
      {action.error !== undefined && <ErrorNotice error={action.error} />}
      {result && result.leases.length > 0 && (
        <ul className="small">
          {result.leases.map((l) => (
            <li key={l.lease_id}>
              Lease <Link href={`/leases/${l.lease_id}`} className="mono">{shortId(l.lease_id)}</Link>:{' '}
              {l.substitute ? <>continues on <span className="mono">{shortId(l.substitute)}</span></> : 'no equivalent node is free: the node simply leaves it'}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
