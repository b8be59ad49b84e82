import { useMemo, useState } from 'react';
import { Link } from 'wouter';
import type { Api, Lease } from '../api/client';
import { unwrap } from '../api/errors';
import { fetchAll } from '../api/fetch-all';
import { loadProjects } from '../api/projects';
import { useResource } from '../api/use-resource';
import { useApi, useViewer } from '../auth/session';
import { ErrorNotice } from '../components/error-notice';
import { StateBadge } from '../components/lease-state';
import { formatRelative, formatTime } from '../lib/format';
import { OPEN_LEASE_STATES } from '../lib/lease-states';

const CURRENT = OPEN_LEASE_STATES;

interface Holding {
  lease: Lease;
  /** The lease's nodes that belong to the owner (a lease may also hold other owners' nodes). */
  nodes: string[];
}

/**
 * Who leases the owner's nodes and until when: GET /v1/leases?owner=<project>, once per current state, each
 * lease reduced to the owner's own nodes (GET /v1/nodes?owner=), sorted by end (the first to come back first).
 * `owner` undefined: the operator's view of every owner.
 */
async function loadHoldings(api: Api, owner: string | undefined, signal: AbortSignal): Promise<{ holdings: Holding[]; truncated: boolean }> {
  const [owned, ...byState] = await Promise.all([
    owner === undefined
      ? Promise.resolve(null)
      : fetchAll(async (marker) => {
          const page = unwrap(await api.GET('/v1/nodes', { params: { query: { owner, limit: 1000, marker } }, signal }));
          return { items: page.nodes, next: page.next };
        }),
    ...CURRENT.map((state) =>
      fetchAll(async (marker) => {
        const page = unwrap(await api.GET('/v1/leases', { params: { query: { owner, state, limit: 1000, marker } }, signal }));
        return { items: page.leases, next: page.next };
      }, 10),
    ),
  ]);
  const mine = owned ? new Set(owned.items.map((n) => n.id)) : null;
  const holdings = byState
    .flatMap((r) => r.items)
    .map((lease) => ({
      lease,
      nodes: lease.allocations.filter((a) => mine === null || mine.has(a.node_id)).map((a) => a.node_name ?? a.node_id),
    }))
    .sort((a, b) => a.lease.end.localeCompare(b.lease.end) || a.lease.start.localeCompare(b.lease.start));
  return { holdings, truncated: byState.some((r) => r.truncated) };
}

export function MyNodesPage() {
  const api = useApi();
  const viewer = useViewer();
  const isAdmin = viewer.role === 'admin';
  const [ownerFilter, setOwnerFilter] = useState('');
  const owner = isAdmin ? ownerFilter || undefined : viewer.project?.id;
  const holdings = useResource((signal) => loadHoldings(api, owner, signal), [owner], { pollMs: 30_000 });
  const projects = useResource((signal) => (isAdmin ? loadProjects(api, signal) : Promise.resolve([])), [isAdmin]);
  const [scope, setScope] = useState<'all' | 'active' | 'pending'>('all');

  const shown = useMemo(
    () =>
      (holdings.data?.holdings ?? []).filter(({ lease }) =>
        scope === 'all' ? true : scope === 'active' ? lease.state !== 'pending' : lease.state === 'pending',
      ),
    [holdings.data, scope],
  );
  const whose = isAdmin ? (ownerFilter ? (projects.data?.find((p) => p.id === ownerFilter)?.name ?? 'this project') + "'s" : "owners'") : 'your';

  return (
    <section>
      <h1>My nodes' leases</h1>
      <p className="muted">
        Who leases {isAdmin ? 'the nodes of each owner' : `the nodes ${viewer.project?.name ?? 'your project'} owns`}, and until
        when: running and upcoming leases, the first to end at the top.
      </p>
      <div className="toolbar">
        {isAdmin && (
          <div className="field">
            <label htmlFor="my-nodes-owner">Owner</label>
            <select id="my-nodes-owner" value={ownerFilter} onChange={(e) => setOwnerFilter(e.target.value)}>
              <option value="">Every owner</option>
              {(projects.data ?? []).map((p) => (
                <option key={p.id} value={p.id}>{p.name}</option>
              ))}
            </select>
          </div>
        )}
        <div className="field">
          <label htmlFor="my-nodes-scope">Show</label>
          <select id="my-nodes-scope" value={scope} onChange={(e) => setScope(e.target.value as typeof scope)}>
            <option value="all">Running and upcoming</option>
            <option value="active">Running now</option>
            <option value="pending">Upcoming</option>
          </select>
        </div>
        <button type="button" className="secondary toolbar-button" onClick={holdings.reload}>Refresh</button>
      </div>

      {holdings.loading && <p aria-busy="true">Loading leases…</p>}
      {holdings.error !== undefined && <ErrorNotice error={holdings.error} retry={holdings.reload} title="Could not load the leases" />}
      {holdings.data && shown.length === 0 && (
        <p className="empty">
          Nobody {scope === 'pending' ? 'has booked' : scope === 'active' ? 'is leasing' : 'is leasing or has booked'} {whose} nodes. Offer
          them on the <Link href="/offers">Offers</Link> page to let other projects lease them.
        </p>
      )}
      {shown.length > 0 && (
        <div className="table-wrap" role="region" aria-label="Leases on my nodes" tabIndex={0}>
          <table className="table stacked">
            <thead>
              <tr>
                <th scope="col">Lessee</th>
                <th scope="col">Lease</th>
                <th scope="col">Nodes</th>
                <th scope="col">State</th>
                <th scope="col">Start</th>
                <th scope="col">End</th>
              </tr>
            </thead>
            <tbody>
              {shown.map(({ lease, nodes }) => (
                <tr key={lease.id}>
                  <th scope="row">{lease.project_name}</th>
                  <td data-label="Lease"><Link href={`/leases/${lease.id}`}>{lease.name}</Link></td>
                  <td data-label="Nodes"><span className="mono small">{nodes.join(', ') || '—'}</span></td>
                  <td data-label="State"><StateBadge state={lease.state} /></td>
                  <td data-label="Start" title={lease.start}>
                    {formatTime(lease.start)}
                    {lease.state === 'pending' && <div className="muted small">{formatRelative(lease.start)}</div>}
                  </td>
                  <td data-label="End" title={lease.end}>
                    {formatTime(lease.end)}
                    <div className="muted small">{formatRelative(lease.end)}</div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {holdings.data?.truncated && <p className="muted small">Showing the first 10,000 leases of each state.</p>}
    </section>
  );
}
