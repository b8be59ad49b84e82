import { useState } from 'react';
import type { Api, Schemas } from '../api/client';
import { unwrap } from '../api/errors';
import { useResource } from '../api/use-resource';
import { useApi, useViewer } from '../auth/session';
import { ErrorNotice } from '../components/error-notice';
import { UsageChart } from '../components/usage-chart';

type Usage = Schemas['Usage'];
type GroupBy = Usage['group_by'];
type Scope = 'mine' | 'my-nodes' | 'all';

const GROUPINGS: Array<{ value: GroupBy; label: string }> = [
  { value: 'project', label: 'Project' },
  { value: 'resource_class', label: 'Resource class' },
  { value: 'owner', label: 'Owner' },
  { value: 'node', label: 'Node' },
];

/** "2030-01" → the month's [from, to) in UTC: usage is reported, and budgets counted, per UTC calendar month. */
export function monthWindow(month: string): { from: string; to: string } {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return { from: new Date(Date.UTC(y, m - 1, 1)).toISOString(), to: new Date(Date.UTC(y, m, 1)).toISOString() };
}

function currentMonth(): string {
  return new Date().toISOString().slice(0, 7);
}

async function loadUsage(api: Api, month: string, groupBy: GroupBy, owner: string | undefined, signal: AbortSignal): Promise<Usage> {
  const query = { ...monthWindow(month), group_by: groupBy, ...(owner !== undefined && { owner }) };
  // The route also answers text/csv (format=csv); JSON is what this asks for.
  return unwrap(await api.GET('/v1/usage', { params: { query }, signal })) as Usage;
}

const charges = (g: Usage['total']) => (g.charges.length === 0 ? '—' : g.charges.map((c) => `${c.amount} ${c.currency}`).join(', '));

/**
 * Node-hours actually used in a calendar month: a project's own use, an owner's nodes' use, everything for the
 * operator (the API decides what each may see). A chart per day stacked by the grouping, and the table.
 */
export function UsagePage() {
  const api = useApi();
  const viewer = useViewer();
  const isAdmin = viewer.role === 'admin';
  const [month, setMonth] = useState(currentMonth);
  const [groupBy, setGroupBy] = useState<GroupBy>(isAdmin || viewer.ownsNodes ? 'project' : 'resource_class');
  const [scope, setScope] = useState<Scope>(isAdmin ? 'all' : 'mine');
  const owner = scope === 'my-nodes' ? viewer.project?.id : undefined;
  const usage = useResource((signal) => loadUsage(api, month, groupBy, owner, signal), [month, groupBy, owner]);
  const data = usage.data;

  return (
    <section>
      <h1>Usage</h1>
      <p className="muted">
        Node-hours actually used: from the moment a lessee had access to a node to the moment it ended (early ends,
        replacements and late hand-overs included), per UTC calendar month. Charges come from the owners' offer prices,
        per currency.
      </p>
      <div className="toolbar">
        <div className="field">
          <label htmlFor="usage-month">Month (UTC)</label>
          <input id="usage-month" type="month" value={month} onChange={(e) => e.target.value && setMonth(e.target.value)} />
        </div>
        {!isAdmin && viewer.ownsNodes && (
          <div className="field">
            <label htmlFor="usage-scope">Whose use</label>
            <select id="usage-scope" value={scope} onChange={(e) => setScope(e.target.value as Scope)}>
              <option value="mine">My project's leases</option>
              <option value="my-nodes">Leases of my nodes</option>
            </select>
          </div>
        )}
        <div className="field">
          <label htmlFor="usage-group">Group by</label>
          <select id="usage-group" value={groupBy} onChange={(e) => setGroupBy(e.target.value as GroupBy)}>
            {GROUPINGS.map((g) => (
              <option key={g.value} value={g.value}>{g.label}</option>
            ))}
          </select>
        </div>
        <button type="button" className="secondary toolbar-button" onClick={usage.reload}>Refresh</button>
      </div>

      {usage.loading && <p aria-busy="true">Loading usage…</p>}
      {usage.error !== undefined && <ErrorNotice error={usage.error} retry={usage.reload} title="Could not load the usage" />}
      {data && data.groups.length === 0 && <p className="empty">No use in this month.</p>}
      {data && data.groups.length > 0 && (
        <>
          <UsageChart days={data.days} groups={data.groups.map((g) => ({ key: g.key ?? '', label: g.name ?? g.key ?? '(none)' }))} />
          <div className="table-wrap" role="region" aria-label="Usage by group" tabIndex={0}>
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">{GROUPINGS.find((g) => g.value === data.group_by)?.label}</th>
                  <th scope="col">Node-hours</th>
                  <th scope="col">Allocations</th>
                  <th scope="col">Charges</th>
                </tr>
              </thead>
              <tbody>
                {data.groups.map((g) => (
                  <tr key={g.key ?? ''}>
                    <th scope="row">{g.name ?? g.key ?? '(none)'}</th>
                    <td>{g.node_hours.toFixed(2)}</td>
                    <td>{g.allocations}</td>
                    <td>{charges(g)}</td>
                  </tr>
                ))}
              </tbody>
              <tfoot>
                <tr>
                  <th scope="row">Total</th>
                  <td>{data.total.node_hours.toFixed(2)}</td>
                  <td>{data.total.allocations}</td>
                  <td>{charges(data.total)}</td>
                </tr>
              </tfoot>
            </table>
          </div>
          <p className="muted">As of {data.as_of}.</p>
        </>
      )}
    </section>
  );
}
