import { useMemo, useState } from 'react';
import { Link } from 'wouter';
import type { Api, Lease } from '../api/client';
import { unwrap } from '../api/errors';
import { fetchAll } from '../api/fetch-all';
import { useResource } from '../api/use-resource';
import { useApi, useViewer } from '../auth/session';
import { ErrorNotice } from '../components/error-notice';
import { StateBadge } from '../components/lease-state';
import { formatRelative, formatTime } from '../lib/format';
import type { Viewer } from '../nav';
import { LEASE_STATES, isOpenLease } from '../lib/lease-states';

const STATES = LEASE_STATES;
type StateFilter = (typeof STATES)[number] | 'current' | 'all';

type Scope = 'project' | 'others' | 'all';

async function loadLeases(api: Api, state: StateFilter, signal: AbortSignal) {
  const query = state === 'all' || state === 'current' ? {} : { state };
  const leases = await fetchAll(async (marker) => {
    const page = unwrap(await api.GET('/v1/leases', { params: { query: { ...query, limit: 1000, marker } }, signal }));
    return { items: page.leases, next: page.next };
  }, 10);
  const items = state === 'current' ? leases.items.filter((l) => isOpenLease(l.state)) : leases.items;
  // Soonest first for what is coming or running; most recent first for the rest.
  items.sort((a, b) => (isOpenLease(a.state) && isOpenLease(b.state) ? a.end.localeCompare(b.end) : b.start.localeCompare(a.start)));
  return { leases: items, truncated: leases.truncated };
}

function scopeOf(lease: Lease, viewer: Viewer): Scope {
  return viewer.project && lease.project_id === viewer.project.id ? 'project' : 'others';
}

export function LeasesPage() {
  const api = useApi();
  const viewer = useViewer();
  const [state, setState] = useState<StateFilter>('current');
  // Owners also see leases of other projects on their nodes; the operator sees everyone's.
  const [scope, setScope] = useState<Scope>(viewer.role === 'admin' ? 'all' : 'project');
  const leases = useResource((signal) => loadLeases(api, state, signal), [state]);

  const shown = useMemo(
    () => (leases.data?.leases ?? []).filter((l) => scope === 'all' || scopeOf(l, viewer) === scope),
    [leases.data, scope, viewer],
  );
  const showScope = viewer.role === 'admin' || viewer.ownsNodes;

  return (
    <section>
      <h1>Leases</h1>
      <div className="toolbar">
        {showScope && (
          <div className="field">
            <label htmlFor="lease-scope">Whose</label>
            <select id="lease-scope" value={scope} onChange={(e) => setScope(e.target.value as Scope)}>
              {viewer.project && <option value="project">{viewer.project.name}'s leases</option>}
              <option value="others">{viewer.role === 'admin' ? 'Other projects' : 'Other projects on our nodes'}</option>
              <option value="all">All I can see</option>
            </select>
          </div>
        )}
        <div className="field">
          <label htmlFor="lease-state">State</label>
          <select id="lease-state" value={state} onChange={(e) => setState(e.target.value as StateFilter)}>
            <option value="current">Current (pending, active, ending)</option>
            {STATES.map((s) => (
              <option key={s} value={s}>{s}</option>
            ))}
            <option value="all">All</option>
          </select>
        </div>
        <button type="button" className="secondary toolbar-button" onClick={leases.reload}>Refresh</button>
      </div>

      {leases.loading && <p aria-busy="true">Loading leases…</p>}
      {leases.error !== undefined && <ErrorNotice error={leases.error} retry={leases.reload} title="Could not load the leases" />}
      {leases.data && shown.length === 0 && (
        <p className="empty">
          No {state === 'current' ? 'current' : state === 'all' ? '' : state} leases here.
          {viewer.role !== 'reader' && (
            <> Lease nodes with <code>leasehold lease create</code>.</>
          )}
        </p>
      )}
      {shown.length > 0 && (
        <div className="table-wrap" role="region" aria-label="Leases" tabIndex={0}>
          <table className="table stacked">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">State</th>
                <th scope="col">Start</th>
                <th scope="col">End</th>
                <th scope="col">Nodes</th>
                <th scope="col">Project</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((lease) => (
                <tr key={lease.id}>
                  <th scope="row"><Link href={`/leases/${lease.id}`}>{lease.name}</Link></th>
                  <td data-label="State"><StateBadge state={lease.state} /></td>
                  <td data-label="Start" title={lease.start}>{formatTime(lease.start)}</td>
                  <td data-label="End" title={lease.end}>
                    {formatTime(lease.end)}
                    {isOpenLease(lease.state) && <div className="muted small">{formatRelative(lease.end)}</div>}
                  </td>
                  <td data-label="Nodes">
                    <span className="mono small">{lease.allocations.map((a) => a.node_name ?? a.node_id).join(', ') || '—'}</span>
                  </td>
                  <td data-label="Project">{lease.project_name}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {leases.data?.truncated && <p className="muted small">Showing the first 10,000 leases.</p>}
    </section>
  );
}
