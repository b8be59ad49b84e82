import type { Allocation, Api, Lease, Node } from '../api/client';
import { unwrap } from '../api/errors';
import { useAction } from '../lib/use-action';
import { BootDevice } from './boot-device';
import { ConfirmButton } from './confirm-button';
import { ErrorNotice } from './error-notice';
import { StateBadge } from './lease-state';
import { AllocationHistory, NodeSwap, staysInLease } from './node-swap';
import { SubleaseChain, SubOfferForm } from './sublease-chain';

/** The engine's release steps in order (src/domain/leasing.ts RELEASE_STEPS): progress while a node is handed back. */
const RELEASE_STEPS = ['clear_lessee', 'detach_networks', 'console_off', 'power_off', 'clean', 'wait_available'];

function Progress({ allocation }: { allocation: Allocation }) {
  if (allocation.state === 'starting') {
    return <progress aria-label={`${allocation.node_name ?? 'node'}: handing over`} />;
  }
  if (allocation.state !== 'releasing') return null;
  const index = allocation.step ? RELEASE_STEPS.indexOf(allocation.step) : 0;
  const step = Math.max(0, index) + 1;
  return (
    <div className="small">
      <progress value={step} max={RELEASE_STEPS.length} aria-label={`${allocation.node_name ?? 'node'}: release step ${step} of ${RELEASE_STEPS.length}`} />
      <span className="muted"> step {step} of {RELEASE_STEPS.length}</span>
    </div>
  );
}

function PowerButtons({ api, allocation, onDone }: { api: Api; allocation: Allocation; onDone: () => void }) {
  const action = useAction();
  const name = allocation.node_name ?? allocation.node_id;
  const power = (what: 'on' | 'off' | 'reboot') =>
    action.run(async () => {
      unwrap(await api.POST('/v1/nodes/{id}/power', { params: { path: { id: allocation.node_id } }, body: { action: what } }));
      // Accepted (202): the node shows the new state when the BMC is done.
      setTimeout(onDone, 1500);
      return `Power ${what} requested for ${name}.`;
    });
  return (
    <div className="power">
      <div className="row" role="group" aria-label={`Power of ${name}`}>
        <button type="button" className="secondary small" disabled={action.busy} onClick={() => power('on')}>
          Power on
        </button>
        <ConfirmButton className="secondary small" label="Power off" question={`Power ${name} off?`} confirmLabel="Power off" disabled={action.busy} onConfirm={() => power('off')} />
        <ConfirmButton className="secondary small" label="Reboot" question={`Reboot ${name}?`} confirmLabel="Reboot" disabled={action.busy} onConfirm={() => power('reboot')} />
      </div>
      {action.done && <p className="small ok" role="status">{action.done}</p>}
      {action.error !== undefined && <ErrorNotice error={action.error} />}
    </div>
  );
}

interface Props {
  api: Api;
  lease: Lease;
  nodes: ReadonlyMap<string, Node | null>;
  /** Power and console are offered only while the lease is active and the viewer may act. */
  canOperate: boolean;
  /** Replace and give back per node: while the lease is upcoming or active, for its members and operators. */
  canChangeNodes: boolean;
  consoleNodeId: string | null;
  onConsole: (allocation: Allocation) => void;
  onChanged: () => void;
}

export function AllocationTable({ api, lease, nodes, canOperate, canChangeNodes, consoleNodeId, onConsole, onChanged }: Props) {
  const swap = useAction();
  const allocations = lease.allocations;
  if (allocations.length === 0) return <p className="empty">This lease holds no nodes.</p>;
  const actions = canOperate || canChangeNodes;
  return (
    <>
      {swap.done && <p className="small ok" role="status">{swap.done}</p>}
      {swap.error !== undefined && <ErrorNotice error={swap.error} />}
      <div className="table-wrap" role="region" aria-label="Allocations" tabIndex={0}>
        <table className="table stacked">
          <thead>
            <tr>
              <th scope="col">Node</th>
              <th scope="col">Group</th>
              <th scope="col">State</th>
              <th scope="col">Power</th>
              {actions && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {allocations.map((a) => {
              const node = nodes.get(a.node_id);
              const live = a.state === 'active' && a.leave_reason === null;
              const stays = staysInLease(a);
              return (
                <tr key={`${a.node_id}/${a.start}`} className={a.leave_reason ? 'muted' : undefined}>
                  <th scope="row" className="mono">{a.node_name ?? a.node_id}</th>
                  <td data-label="Group">{a.group + 1}</td>
                  <td data-label="State">
                    <StateBadge state={a.state} step={a.step} />
                    <Progress allocation={a} />
                    {a.last_error && <div className="error small">{a.last_error}</div>}
                    <AllocationHistory allocation={a} allocations={allocations} />
                    <SubleaseChain allocation={a} />
                  </td>
                  <td data-label="Power">{node ? node.power_state ?? 'unknown' : <span className="muted">—</span>}</td>
                  {actions && (
                    <td data-label="Actions">
                      <div className="stack">
                        {canOperate && live && (
                          <>
                            <PowerButtons api={api} allocation={a} onDone={onChanged} />
                            <BootDevice api={api} nodeId={a.node_id} nodeName={a.node_name ?? a.node_id} />
                            <button type="button" className="small" aria-pressed={consoleNodeId === a.node_id} onClick={() => onConsole(a)}>
                              {consoleNodeId === a.node_id ? 'Console open below' : 'Open console'}
                            </button>
                          </>
                        )}
                        {canOperate && !live && stays && <span className="muted small">power and console when active</span>}
                        {canChangeNodes && stays && <NodeSwap api={api} lease={lease} allocation={a} action={swap} onChanged={onChanged} />}
                        {/* One level only: a node held through a sub-lease is not offered on. */}
                        {canChangeNodes && stays && !(a.sublease_of ?? null) && <SubOfferForm api={api} allocation={a} onChanged={onChanged} />}
                      </div>
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </>
  );
}
