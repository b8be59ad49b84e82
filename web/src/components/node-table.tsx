import { Link } from 'wouter';
import type { Lease, Node } from '../api/client';
import { formatBytes, formatTime } from '../lib/format';

/** The facts that get a column; the rest are listed under "more". */
const MAIN_FACTS = new Set(['memory', 'disk', 'cpus', 'gpus', 'cpu_arch', 'resource_class']);

function num(node: Node, fact: string): number | undefined {
  const value = node.facts[fact];
  return typeof value === 'number' ? value : undefined;
}

function stateText(node: Node): string {
  const provision = node.target_provision_state ? `${node.provision_state} → ${node.target_provision_state}` : node.provision_state;
  return provision;
}

function CurrentLease({ node, lease }: { node: Node; lease: Lease | undefined }) {
  if (lease) {
    return (
      <>
        <Link href={`/leases/${lease.id}`}>{lease.name}</Link>
        <div className="muted small" title={lease.end}>until {formatTime(lease.end)}</div>
      </>
    );
  }
  // A lessee set in Ironic without a lease we can see (e.g. set by hand: the reconciler clears it).
  if (node.lessee) return <span className="muted">leased</span>;
  return <span className="muted">—</span>;
}

export function NodeTable({ nodes, leases }: { nodes: readonly Node[]; leases: ReadonlyMap<string, Lease> }) {
  return (
    <div className="table-wrap" role="region" aria-label="Nodes" tabIndex={0}>
      <table className="table stacked">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">CPUs</th>
            <th scope="col">Memory</th>
            <th scope="col">Disk</th>
            <th scope="col">GPUs</th>
            <th scope="col">Arch</th>
            <th scope="col">Traits and other facts</th>
            <th scope="col">Owner</th>
            <th scope="col">State</th>
            <th scope="col">Current lease</th>
          </tr>
        </thead>
        <tbody>
          {nodes.map((node) => {
            const memory = num(node, 'memory');
            const disk = num(node, 'disk');
            const extra = Object.entries(node.facts).filter(([key]) => !MAIN_FACTS.has(key));
            return (
              <tr key={node.id}>
                <th scope="row">
                  <Link href={`/nodes/${node.id}`} className="mono">{node.name ?? node.id}</Link>
                  {node.resource_class && <div className="muted small">{node.resource_class}</div>}
                </th>
                <td data-label="CPUs" className="num">{num(node, 'cpus') ?? '—'}</td>
                <td data-label="Memory" className="num">{memory === undefined ? '—' : formatBytes(memory, 'binary')}</td>
                <td data-label="Disk" className="num">{disk === undefined ? '—' : formatBytes(disk, 'decimal')}</td>
                <td data-label="GPUs" className="num">{num(node, 'gpus') ?? '—'}</td>
                <td data-label="Arch">{String(node.facts.cpu_arch ?? '—')}</td>
                <td data-label="Traits">
                  {node.traits.length > 0 && (
                    <ul className="chips" aria-label="Traits">
                      {node.traits.map((t) => (
                        <li key={t} className="chip mono">{t}</li>
                      ))}
                    </ul>
                  )}
                  {extra.length > 0 && (
                    <details>
                      <summary className="small">{extra.length} more facts</summary>
                      <dl className="facts small">
                        {extra.map(([key, value]) => (
                          <div key={key}>
                            <dt className="mono">{key}</dt>
                            <dd className="mono">{String(value)}</dd>
                          </div>
                        ))}
                      </dl>
                    </details>
                  )}
                  {node.traits.length === 0 && extra.length === 0 && <span className="muted">—</span>}
                </td>
                <td data-label="Owner">{node.owner_project?.name ?? node.owner ?? <span className="muted">none</span>}</td>
                <td data-label="State">
                  <span className={`state state-${node.provision_state}`}>{stateText(node)}</span>
                  <div className="muted small">
                    {node.power_state ?? 'power unknown'}
                    {node.maintenance && <strong className="warn"> · maintenance</strong>}
                  </div>
                  {node.maintenance_reason && <div className="muted small">{node.maintenance_reason}</div>}
                </td>
                <td data-label="Lease">
                  <CurrentLease node={node} lease={leases.get(node.id)} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** Case-insensitive search over what people type to find a node: name, id, owner, class, states, arch, traits. */
export function matchesSearch(node: Node, search: string): boolean {
  const needle = search.trim().toLowerCase();
  if (!needle) return true;
  const haystack = [
    node.name,
    node.id,
    node.owner,
    node.owner_project?.name,
    node.resource_class,
    node.provision_state,
    node.power_state,
    node.facts.cpu_arch,
    ...node.traits,
  ]
    .filter((v) => v !== null && v !== undefined)
    .join(' ')
    .toLowerCase();
  return needle.split(/\s+/).every((word) => haystack.includes(word));
}
