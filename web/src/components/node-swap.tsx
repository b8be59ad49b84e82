import type { Allocation, Api, Lease } from '../api/client';
import { unwrap } from '../api/errors';
import { formatTime } from '../lib/format';
import type { Action } from '../lib/use-action';
import { ConfirmButton } from './confirm-button';

/** Allocations still in the lease: not left (replaced, returned, reclaimed) and not being released. */
export function staysInLease(a: Allocation): boolean {
  return a.leave_reason === null && (a.state === 'reserved' || a.state === 'starting' || a.state === 'active');
}

const LEFT: Record<NonNullable<Allocation['leave_reason']>, string> = {
  replaced: 'Replaced',
  returned: 'Given back',
  reclaimed: 'Taken back by its owner',
  failed: 'Left after a failure',
  parent_ended: 'Ended with the lease it was sub-leased from',
};

/** What became of a node that left, what it stands in for, or what is wrong with it: one line each. */
export function AllocationHistory({ allocation, allocations }: { allocation: Allocation; allocations: readonly Allocation[] }) {
  const name = (id: string) => allocations.find((b) => b.node_id === id)?.node_name ?? id;
  const successor = allocations.find((b) => b.replaces === allocation.node_id);
  return (
    <>
      {allocation.replaces && (
        <div className="small">Replaces <span className="mono">{name(allocation.replaces)}</span> since <span title={allocation.start}>{formatTime(allocation.start)}</span></div>
      )}
      {allocation.leave_reason && (
        <div className="small muted">
          {LEFT[allocation.leave_reason]} <span title={allocation.end}>{formatTime(allocation.end)}</span>
          {successor && <> by <span className="mono">{successor.node_name ?? successor.node_id}</span></>}
        </div>
      )}
      {allocation.failure && <div className="error small">Failed: {allocation.failure}</div>}
    </>
  );
}

interface Props {
  api: Api;
  lease: Lease;
  allocation: Allocation;
  /** Shared by the table's rows: its outcome is shown above the table, as the row it came from may be gone. */
  action: Action;
  onChanged: () => void;
}

/**
 * Replace one node by an equivalent free one, or give it back now (the rest of the lease goes on). Both ask first:
 * access to the node ends at once and it is wiped.
 */
export function NodeSwap({ api, lease, allocation, action, onChanged }: Props) {
  const name = allocation.node_name ?? allocation.node_id;
  const path = { params: { path: { id: lease.id, node: allocation.node_id } } };
  const last = lease.allocations.filter(staysInLease).length === 1;

  const replace = () =>
    action.run(async () => {
      const updated = unwrap(await api.POST('/v1/leases/{id}/allocations/{node}/replace', { ...path, body: {} }));
      onChanged();
      const substitute = updated.allocations.find((a) => a.replaces === allocation.node_id);
      return `${name} is replaced by ${substitute?.node_name ?? substitute?.node_id ?? 'another node'}; ${name} is being wiped.`;
    });
  const giveBack = () =>
    action.run(async () => {
      unwrap(await api.DELETE('/v1/leases/{id}/allocations/{node}', path));
      onChanged();
      return last ? 'That was the last node: the lease is ending.' : `${name} is given back and being wiped; the lease goes on.`;
    });

  return (
    <div className="row" role="group" aria-label={`Change ${name} in this lease`}>
        <ConfirmButton
          className="secondary small"
          label="Replace"
          question={`Swap ${name} for an equivalent free node? Your access to ${name} ends now and it is wiped.`}
          confirmLabel="Replace it"
          disabled={action.busy}
          onConfirm={replace}
        />
        <ConfirmButton
          danger
          className="secondary small"
          label="Give back"
          question={last ? `${name} is the last node: giving it back ends the lease now. Go ahead?` : `Give ${name} back now? Access ends at once and it is wiped; the rest of the lease goes on.`}
          confirmLabel="Give it back"
          disabled={action.busy}
          onConfirm={giveBack}
        />
    </div>
  );
}
