import { lazy, Suspense, useState } from 'react';
import { Link, useParams } from 'wouter';
import type { Allocation, Api, Lease, Node } from '../api/client';
import { isNotFound, unwrap } from '../api/errors';
import { useResource } from '../api/use-resource';
import { useApi, useViewer } from '../auth/session';
import { AllocationTable } from '../components/allocation-table';
import { Countdown } from '../components/countdown';
import { ErrorNotice } from '../components/error-notice';
import { LeaseActions } from '../components/lease-actions';
import { NodeNetworks } from '../components/node-networks';
import { ReplacePolicy } from '../components/replace-policy';
import { LeaseNotices } from '../components/lease-notices';
import { LeaseRenewal } from '../components/lease-renewal';
import { StateBadge } from '../components/lease-state';
import { formatTime } from '../lib/format';
import { isSettled, leasePollMs } from '../lib/lease-poll';
import { canRoleAct } from '../nav';
import { isOpenLease } from '../lib/lease-states';

// xterm.js is most of the bundle's weight: loaded when a console is first opened.
const SerialConsole = lazy(() => import('../console/serial-console'));


interface Detail {
  lease: Lease;
  /** The allocated nodes as the caller sees them now (null: not visible, e.g. before the start or after the end). */
  nodes: Map<string, Node | null>;
}

async function loadDetail(api: Api, id: string, signal: AbortSignal): Promise<Detail> {
  const lease = unwrap(await api.GET('/v1/leases/{id}', { params: { path: { id } }, signal }));
  const nodes = new Map<string, Node | null>();
  if (isOpenLease(lease.state)) {
    await Promise.all(
      lease.allocations.map(async (a) => {
        try {
          nodes.set(a.node_id, unwrap(await api.GET('/v1/nodes/{id}', { params: { path: { id: a.node_id } }, signal })));
        } catch (err) {
          if (!isNotFound(err)) throw err;
          nodes.set(a.node_id, null);
        }
      }),
    );
  }
  return { lease, nodes };
}

function Timing({ lease }: { lease: Lease }) {
  if (lease.state === 'pending') {
    return (
      <p className="timing">
        Starts in <Countdown to={lease.start} after="a moment" /> <span className="muted">({formatTime(lease.start)})</span>
      </p>
    );
  }
  if (lease.state === 'active') {
    return (
      <p className="timing">
        Ends in <Countdown to={lease.end} after="a moment" /> <span className="muted">({formatTime(lease.end)})</span>
      </p>
    );
  }
  return (
    <p className="timing muted">
      {formatTime(lease.start)} – {formatTime(lease.end)}
    </p>
  );
}

export function LeaseDetailPage() {
  const { id } = useParams<{ id: string }>();
  const api = useApi();
  const viewer = useViewer();
  const [consoleFor, setConsoleFor] = useState<Allocation | null>(null);
  const detail = useResource((signal) => loadDetail(api, id, signal), [id], { pollMs: (d) => leasePollMs(d.lease) });

  if (detail.loading) return <p aria-busy="true">Loading the lease…</p>;
  if (!detail.data) {
    return (
      <section>
        <h1>Lease</h1>
        {isNotFound(detail.error) ? (
          <p className="empty">There is no lease {id} that you can see. <Link href="/leases">All leases</Link></p>
        ) : (
          <ErrorNotice error={detail.error} retry={detail.reload} title="Could not load the lease" />
        )}
      </section>
    );
  }

  const { lease, nodes } = detail.data;
  const ours = viewer.role === 'admin' || viewer.project?.id === lease.project_id;
  const mayAct = canRoleAct(viewer);
  const canChange = mayAct && ours && (lease.state === 'pending' || lease.state === 'active');
  const canOperate = mayAct && lease.state === 'active';
  // Kept open past the lease's end: the console's close says why it ended ("access ended with the lease").
  const activeConsole = consoleFor;

  return (
    <section className="lease-detail">
      <p className="small"><Link href="/leases">← Leases</Link></p>
      <div className="row spread">
        <h1>
          {lease.name} <StateBadge state={lease.state} />
        </h1>
        <span className="muted small" aria-live="polite">
          {isSettled(lease) ? '' : 'Updating every 2 s…'}
        </span>
      </div>
      <Timing lease={lease} />
      {detail.error !== undefined && <ErrorNotice error={detail.error} retry={detail.reload} title="Could not refresh" />}

      <dl className="meta small">
        <div><dt>Id</dt><dd className="mono">{lease.id}</dd></div>
        <div><dt>Project</dt><dd title={lease.project_id}>{lease.project_name}</dd></div>
        <div><dt>Start</dt><dd title={lease.start}>{formatTime(lease.start)}</dd></div>
        <div><dt>End</dt><dd title={lease.end}>{formatTime(lease.end)}</dd></div>
        {lease.request.groups?.map((g, i) => (
          <div key={i}><dt>Group {i + 1}</dt><dd className="mono">{g.count} × {g.where}</dd></div>
        ))}
        {lease.request.nodes && lease.request.nodes.length > 0 && (
          <div><dt>Asked for</dt><dd className="mono">{lease.request.nodes.join(', ')}</dd></div>
        )}
        <div><dt>When a node fails</dt><dd><ReplacePolicy api={api} lease={lease} canChange={canChange} onChanged={detail.reload} /></dd></div>
        <div><dt>Notices</dt><dd><LeaseNotices lease={lease} /></dd></div>
      </dl>
      {ours && (lease.state === 'pending' || lease.state === 'active') && <LeaseRenewal api={api} lease={lease} canChange={canChange} onChanged={detail.reload} />}

      <h2>Nodes</h2>
      <AllocationTable
        api={api}
        lease={lease}
        nodes={nodes}
        canOperate={canOperate}
        canChangeNodes={canChange}
        consoleNodeId={activeConsole?.node_id ?? null}
        onConsole={setConsoleFor}
        onChanged={detail.reload}
      />

      {activeConsole && (
        <Suspense fallback={<p aria-busy="true">Loading the terminal…</p>}>
          <SerialConsole
            key={activeConsole.node_id}
            api={api}
            nodeId={activeConsole.node_id}
            nodeName={activeConsole.node_name ?? activeConsole.node_id}
            onClose={() => setConsoleFor(null)}
            leaseOver={lease.state !== 'active'}
          />
        </Suspense>
      )}

      {/* After the console, which opens from the allocations above (xterm.js draws nothing while off-screen). */}
      {lease.state === 'active' &&
        lease.allocations
          .filter((a) => nodes.get(a.node_id))
          .map((a) => (
            <NodeNetworks key={a.node_id} api={api} nodeId={a.node_id} nodeName={a.node_name ?? a.node_id} canChange={canOperate && ours} />
          ))}

      {canChange && <LeaseActions api={api} lease={lease} onChanged={() => detail.reload()} />}
    </section>
  );
}
