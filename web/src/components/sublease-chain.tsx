import { useState } from 'react';
import { Link } from 'wouter';
import type { Allocation, Api, Schemas } from '../api/client';
import { oneOffer } from '../api/offers';
import { unwrap } from '../api/errors';
import { formatTime } from '../lib/format';
import { useAction } from '../lib/use-action';
import { ErrorNotice } from './error-notice';
import { fieldErrors } from './field';
import { UtcTimeField, utcInputToIso } from './utc-time';

type LinkedLease = Schemas['LinkedLease'];

function LeaseLink({ lease }: { lease: LinkedLease }) {
  return <Link href={`/leases/${lease.lease_id}`}>{lease.lease_name}</Link>;
}

/**
 * The sub-leasing chain of one node of a lease (one level, as ESI): the lease it is sub-leased from, or the
 * sub-leases carved from it — during which this lease's lessee has no access to the node.
 */
export function SubleaseChain({ allocation }: { allocation: Allocation }) {
  // Absent from a server older than sub-leasing (and from fixtures written before it): no chain.
  const parent = allocation.sublease_of ?? null;
  const subs = allocation.subleases ?? [];
  if (!parent && subs.length === 0) return null;
  return (
    <>
      {parent && (
        <div className="small">
          Sub-leased from <LeaseLink lease={parent} /> of {parent.project_name}, which holds it until{' '}
          <span title={parent.end}>{formatTime(parent.end)}</span>
        </div>
      )}
      {subs.map((s) => (
        <div key={s.lease_id} className="small">
          Sub-leased to {s.project_name} (<LeaseLink lease={s} />, {s.state}) from <span title={s.start}>{formatTime(s.start)}</span> to{' '}
          <span title={s.end}>{formatTime(s.end)}</span>: no access for you meanwhile
        </div>
      ))}
    </>
  );
}

/**
 * A lessee offers a node it holds to another project, inside its own lease on the node (the API refuses anything
 * else, naming the rule: `sublease_within_lease`, or `sublease_one_level` for a node held through a sub-lease).
 */
export function SubOfferForm({ api, allocation, onChanged }: { api: Api; allocation: Allocation; onChanged: () => void }) {
  const [project, setProject] = useState('');
  const [until, setUntil] = useState('');
  const action = useAction();
  const name = allocation.node_name ?? allocation.node_id;
  const id = `sub-offer-${allocation.node_id}`;
  const offer = () =>
    action.run(async () => {
      const end = utcInputToIso(until);
      const made = oneOffer(
        unwrap(
          await api.POST('/v1/offers', {
            body: { node_id: allocation.node_id, ...(project.trim() ? { allowed_projects: [project.trim()] } : {}), ...(end ? { end } : {}) },
          }),
        ),
      );
      onChanged();
      return `${name} offered${project.trim() ? ` to ${project.trim()}` : ''} until ${formatTime(made.end ?? allocation.end)}.`;
    });
  return (
    <details className="small">
      <summary>Offer to another project</summary>
      <div className="row" style={{ alignItems: 'flex-end' }}>
        <label htmlFor={`${id}-project`}>
          Project
          <input id={`${id}-project`} value={project} onChange={(e) => setProject(e.target.value)} placeholder="any project" />
        </label>
        <UtcTimeField id={`${id}-end`} label="Until" value={until} onChange={setUntil} emptyMeaning="the end of your lease on it" error={fieldErrors(action.error).end} />
        <button type="button" className="small" disabled={action.busy} onClick={offer}>
          Offer {name}
        </button>
      </div>
      {action.done && <p className="ok" role="status">{action.done}</p>}
      {action.error !== undefined && <ErrorNotice error={action.error} />}
    </details>
  );
}
