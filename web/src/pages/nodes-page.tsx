import { useMemo, useState } from 'react';
import type { Api, Lease, Node, Offer } from '../api/client';
import { ApiError, errorText, unwrap } from '../api/errors';
import { fetchAll } from '../api/fetch-all';
import { useResource } from '../api/use-resource';
import { useApi } from '../auth/session';
import { ErrorNotice } from '../components/error-notice';
import { ExpressionFilter } from '../components/expression-filter';
import { NodeTable, matchesSearch } from '../components/node-table';

interface Inventory {
  nodes: Node[];
  truncated: boolean;
  /** Active leases by node id (those the caller can see: its own, and those on nodes it owns). */
  leases: Map<string, Lease>;
}

async function loadInventory(api: Api, signal: AbortSignal): Promise<Inventory> {
  const [nodes, leases] = await Promise.all([
    fetchAll(async (marker) => {
      const page = unwrap(await api.GET('/v1/nodes', { params: { query: { limit: 1000, marker } }, signal }));
      return { items: page.nodes, next: page.next };
    }),
    fetchAll(async (marker) => {
      const page = unwrap(await api.GET('/v1/leases', { params: { query: { limit: 1000, state: 'active', marker } }, signal }));
      return { items: page.leases, next: page.next };
    }),
  ]);
  const byNode = new Map<string, Lease>();
  for (const lease of leases.items) for (const a of lease.allocations) byNode.set(a.node_id, lease);
  return { nodes: nodes.items, truncated: nodes.truncated, leases: byNode };
}

export interface ExpressionMatch {
  /** The caller's nodes (GET /v1/nodes?where=) that match. */
  readonly nodeIds: ReadonlySet<string>;
  /** Active or scheduled offers visible to the caller whose node matches (GET /v1/offers?where=). */
  readonly offered: readonly Offer[];
}

/**
 * The nodes an expression matches, asked of the API (`leasehold node list --where`, `offer list --where`): the
 * caller's own nodes, and the offered ones it could lease. A malformed expression or an unknown fact is the API's
 * 400, shown verbatim.
 */
export async function matchExpression(api: Api, where: string, signal?: AbortSignal): Promise<ExpressionMatch> {
  const [nodes, offers] = await Promise.all([
    fetchAll(async (marker) => {
      const page = unwrap(await api.GET('/v1/nodes', { params: { query: { where, limit: 1000, marker } }, signal }));
      return { items: page.nodes, next: page.next };
    }),
    fetchAll(async (marker) => {
      const page = unwrap(await api.GET('/v1/offers', { params: { query: { where, limit: 1000, marker } }, signal }));
      return { items: page.offers, next: page.next };
    }),
  ]);
  return {
    nodeIds: new Set(nodes.items.map((n) => n.id)),
    offered: offers.items.filter((o) => o.status === 'active' || o.status === 'scheduled'),
  };
}

export function NodesPage() {
  const api = useApi();
  const [search, setSearch] = useState('');
  const [where, setWhere] = useState('');
  const inventory = useResource((signal) => loadInventory(api, signal), []);
  const matches = useResource((signal) => (where ? matchExpression(api, where, signal) : Promise.resolve(null)), [where]);

  const visible = useMemo(() => {
    const nodes = inventory.data?.nodes ?? [];
    const matching = matches.data?.nodeIds ?? null;
    return nodes.filter((n) => (matching === null || matching.has(n.id)) && matchesSearch(n, search));
  }, [inventory.data, matches.data, search]);

  // Offered nodes that match but are not in the caller's node list (another project's, not leased by it yet).
  const elsewhere = useMemo(() => {
    if (!matches.data || !inventory.data) return [];
    const known = new Set(inventory.data.nodes.map((n) => n.id));
    const names = new Map<string, string>();
    for (const o of matches.data.offered) if (!known.has(o.node_id)) names.set(o.node_id, o.node_name ?? o.node_id);
    return [...names.values()].sort();
  }, [matches.data, inventory.data]);

  const expressionError = where && matches.error !== undefined ? matches.error : undefined;
  const total = inventory.data?.nodes.length ?? 0;

  return (
    <section>
      <h1>Nodes</h1>
      <div className="toolbar">
        <div className="field">
          <label htmlFor="node-search">Search</label>
          <input
            id="node-search"
            type="search"
            placeholder="name, owner, state, trait…"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
        </div>
        <ExpressionFilter
          id="node-where"
          className="field grow"
          label="Filter nodes"
          placeholder="memory >= 48GiB and gpus >= 1"
          where={where}
          onApply={setWhere}
          error={expressionError === undefined ? undefined : expressionError instanceof ApiError ? expressionError.message : errorText(expressionError)}
          help={
            <>
              Checked by the server, as <code>leasehold node list --where</code> does. Facts: memory, disk, cpus, gpus,
              cpu_arch, resource_class, properties; <code>has TRAIT</code>; and/or/not.
            </>
          }
        />
      </div>

      {inventory.loading && <p aria-busy="true">Loading nodes…</p>}
      {inventory.error !== undefined && <ErrorNotice error={inventory.error} retry={inventory.reload} title="Could not load the nodes" />}
      {inventory.data && (
        <>
          <p className="muted small" aria-live="polite">
            {where && matches.loading ? 'Matching…' : `${visible.length} of ${total} nodes`}
            {where && !matches.loading && !expressionError && ` match ${JSON.stringify(where)}`}
            {expressionError !== undefined && ' (the expression is not applied)'}
            {inventory.data.truncated && ' (the first 20,000 only)'}
          </p>
          {total === 0 && <p className="empty">You can see no nodes: your project owns none and leases none right now.</p>}
          {total > 0 && visible.length === 0 && <p className="empty">No node matches.</p>}
          {visible.length > 0 && <NodeTable nodes={visible} leases={inventory.data.leases} />}
          {elsewhere.length > 0 && (
            <p className="small">
              Also offered to you and matching: <span className="mono">{elsewhere.join(', ')}</span> (their details show
              once you lease them).
            </p>
          )}
        </>
      )}
    </section>
  );
}
