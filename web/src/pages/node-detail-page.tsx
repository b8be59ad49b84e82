import { Link, useParams } from 'wouter';
import type { Api, Node } from '../api/client';
import { isNotFound, unwrap } from '../api/errors';
import { useResource } from '../api/use-resource';
import { useApi, useViewer } from '../auth/session';
import { ErrorNotice } from '../components/error-notice';
import { NodeNetworks } from '../components/node-networks';
import { NodeReclaim } from '../components/node-reclaim';
import { formatBytes, formatTime } from '../lib/format';
import { canRoleAct } from '../nav';

async function loadNode(api: Api, id: string, signal: AbortSignal): Promise<Node> {
  return unwrap(await api.GET('/v1/nodes/{id}', { params: { path: { id } }, signal }));
}

const num = (node: Node, fact: string) => (typeof node.facts[fact] === 'number' ? (node.facts[fact] as number) : undefined);

/** One node: its facts and states, its current lease, and its NICs with the networks on them. */
export function NodeDetailPage() {
  const { id } = useParams<{ id: string }>();
  const api = useApi();
  const viewer = useViewer();
  const node = useResource((signal) => loadNode(api, id, signal), [id], { pollMs: 15_000 });

  if (node.loading) return <p aria-busy="true">Loading the node…</p>;
  if (!node.data) {
    return (
      <section>
        <h1>Node</h1>
        {isNotFound(node.error) ? (
          <p className="empty">There is no node {id} that you can see. <Link href="/nodes">All nodes</Link></p>
        ) : (
          <ErrorNotice error={node.error} retry={node.reload} title="Could not load the node" />
        )}
      </section>
    );
  }
  const n = node.data;
  const memory = num(n, 'memory');
  const disk = num(n, 'disk');
  const owns = viewer.project !== null && n.owner_project?.id === viewer.project.id;
  const leases = viewer.project !== null && n.lease?.project_id === viewer.project.id;
  // The API decides again on every change; this only hides what would be refused.
  const canChange = canRoleAct(viewer) && (viewer.role === 'admin' || owns || leases);

  return (
    <section className="node-detail">
      <p className="small"><Link href="/nodes">← Nodes</Link></p>
      <h1 className="mono">{n.name ?? n.id}</h1>
      <dl className="meta small">
        <div><dt>Id</dt><dd className="mono">{n.id}</dd></div>
        <div><dt>Owner</dt><dd>{n.owner_project?.name ?? n.owner ?? '—'}</dd></div>
        <div><dt>Resource class</dt><dd>{n.resource_class ?? '—'}</dd></div>
        <div><dt>CPUs</dt><dd>{num(n, 'cpus') ?? '—'}</dd></div>
        <div><dt>Memory</dt><dd>{memory === undefined ? '—' : formatBytes(memory, 'binary')}</dd></div>
        <div><dt>Disk</dt><dd>{disk === undefined ? '—' : formatBytes(disk, 'decimal')}</dd></div>
        <div><dt>State</dt><dd>{n.provision_state}{n.power_state ? `, ${n.power_state}` : ''}</dd></div>
        {n.lease && (
          <div>
            <dt>Lease</dt>
            <dd><Link href={`/leases/${n.lease.id}`}>until {formatTime(n.lease.end)}</Link></dd>
          </div>
        )}
        {n.lease?.sublease_of && (
          <div>
            <dt>Sub-leased from</dt>
            <dd>
              <Link href={`/leases/${n.lease.sublease_of.lease_id}`}>{n.lease.sublease_of.lease_name}</Link> of {n.lease.sublease_of.project_name}, until{' '}
              {formatTime(n.lease.sublease_of.end)}
            </dd>
          </div>
        )}
      </dl>
      <NodeNetworks api={api} nodeId={n.id} nodeName={n.name ?? n.id} canChange={canChange} />
      {canRoleAct(viewer) && (owns || viewer.role === 'admin') && <NodeReclaim api={api} nodeId={n.id} nodeName={n.name ?? n.id} />}
    </section>
  );
}
