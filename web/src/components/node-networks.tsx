import { useId, useState, type FormEvent } from 'react';
import type { Api, Network, Nic, NodeNetworks as NodeNetworksBody } from '../api/client';
import { ApiError, unwrap } from '../api/errors';
import { useResource } from '../api/use-resource';
import { useAction } from '../lib/use-action';
import { ConfirmButton } from './confirm-button';
import { ErrorNotice } from './error-notice';
import { Field } from './field';

interface Loaded {
  nics: NodeNetworksBody['nics'];
  /** The networks the viewer may attach; null when it may not change anything (only the NICs are shown). */
  networks: Network[] | null;
}

/** Tenant networks are off on this deployment (409 not_configured): the section is not shown at all. */
const OFF = Symbol('networks off');

async function load(api: Api, nodeId: string, canChange: boolean, signal: AbortSignal): Promise<Loaded | typeof OFF> {
  try {
    const [nics, networks] = await Promise.all([
      api.GET('/v1/nodes/{id}/networks', { params: { path: { id: nodeId } }, signal }).then(unwrap),
      canChange ? api.GET('/v1/networks', { signal }).then(unwrap) : Promise.resolve(null),
    ]);
    return { nics: nics.nics, networks: networks ? networks.networks : null };
  } catch (err) {
    if (err instanceof ApiError && err.code === 'not_configured') return OFF;
    throw err;
  }
}

const vlanText = (vlan: number | null | undefined) => (vlan === null || vlan === undefined ? '—' : String(vlan));

/**
 * A node's NICs and the networks on them (GET /v1/nodes/{id}/networks), with attach (a picker of the networks the
 * viewer may use, an optional NIC and tagged networks) and detach behind a confirmation. Hidden where tenant
 * networks are not configured.
 */
export function NodeNetworks({ api, nodeId, nodeName, canChange }: { api: Api; nodeId: string; nodeName: string; canChange: boolean }) {
  const data = useResource((signal) => load(api, nodeId, canChange, signal), [nodeId, canChange], { pollMs: 10_000 });
  const action = useAction();
  if (data.data === OFF) return null;
  const headingId = `networks-${nodeId}`;

  return (
    <section className="node-networks" aria-labelledby={headingId}>
      <h3 id={headingId}>Networks of {nodeName}</h3>
      {data.loading && <p aria-busy="true">Loading the NICs…</p>}
      {data.error !== undefined && <ErrorNotice error={data.error} retry={data.reload} title="Could not load the networks" />}
      {data.data && (
        <>
          <NicTable
            nics={data.data.nics}
            canChange={canChange}
            busy={action.busy}
            onDetach={(attachment, label) =>
              action.run(async () => {
                unwrap(await api.DELETE('/v1/nodes/{id}/networks/{attachment}', { params: { path: { id: nodeId, attachment } } }));
                data.reload();
                return `${label} detached from ${nodeName}.`;
              })
            }
          />
          {canChange && data.data.networks && (
            <AttachForm
              networks={data.data.networks}
              nics={data.data.nics}
              busy={action.busy}
              onAttach={(body) =>
                action.run(async () => {
                  const attached = unwrap(await api.POST('/v1/nodes/{id}/networks', { params: { path: { id: nodeId } }, body }));
                  data.reload();
                  return `${attached.network?.name ?? 'Network'} attached to ${nodeName} on ${attached.nic.mac ?? 'a free NIC'}.`;
                })
              }
            />
          )}
        </>
      )}
      {action.done && <p className="small ok" role="status">{action.done}</p>}
      {action.error !== undefined && <ErrorNotice error={action.error} />}
    </section>
  );
}

function NicTable({ nics, canChange, busy, onDetach }: { nics: Nic[]; canChange: boolean; busy: boolean; onDetach: (attachment: string, label: string) => void }) {
  if (nics.length === 0) return <p className="empty">This node has no NICs in Ironic.</p>;
  return (
    <div className="table-wrap" role="region" aria-label="NICs" tabIndex={0}>
      <table className="table stacked">
        <thead>
          <tr>
            <th scope="col">NIC</th>
            <th scope="col">Network</th>
            <th scope="col">VLAN</th>
            <th scope="col">Tagged</th>
            <th scope="col">Binding</th>
            {canChange && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {nics.map((nic) => {
            const a = nic.attachment;
            const label = a?.network?.name ?? a?.port_id ?? 'network';
            return (
              <tr key={nic.id}>
                <th scope="row">
                  <span className="mono">{nic.mac}</span>
                  {nic.physical_network && <div className="muted small">{nic.physical_network}</div>}
                </th>
                <td data-label="Network">{a ? label : nic.in_use ? <span className="muted">in use by another project</span> : <span className="muted">free</span>}</td>
                <td data-label="VLAN" className="num">{vlanText(a?.network?.vlan)}</td>
                <td data-label="Tagged">
                  {a?.trunk && a.trunk.tagged.length > 0 ? a.trunk.tagged.map((t) => `${t.network.name} (${vlanText(t.network.vlan)})`).join(', ') : '—'}
                </td>
                <td data-label="Binding">{a?.binding ?? '—'}</td>
                {canChange && (
                  <td data-label="Actions">
                    {a && (
                      <ConfirmButton
                        className="secondary small"
                        label="Detach"
                        question={`Detach ${label} from ${nic.mac}?${a.port_created ? ' Its port will be deleted.' : ''}`}
                        confirmLabel="Detach"
                        disabled={busy}
                        onConfirm={() => onDetach(a.id, label)}
                      />
                    )}
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function AttachForm({
  networks,
  nics,
  busy,
  onAttach,
}: {
  networks: Network[];
  nics: Nic[];
  busy: boolean;
  onAttach: (body: { network: string; mac?: string; tagged?: string[] }) => Promise<boolean>;
}) {
  const id = useId();
  const [network, setNetwork] = useState('');
  const [mac, setMac] = useState('');
  const [tagged, setTagged] = useState<string[]>([]);
  const free = nics.filter((n) => !n.in_use);
  const taggable = networks.filter((n) => n.id !== network && n.vlan !== null);
  if (networks.length === 0) return <p className="muted small">Your project has no networks to attach yet.</p>;
  if (free.length === 0) return <p className="muted small">Every NIC of this node carries a network: detach one to attach another.</p>;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!network) return;
    const ok = await onAttach({ network, ...(mac ? { mac } : {}), ...(tagged.length > 0 ? { tagged } : {}) });
    if (ok) {
      setNetwork('');
      setMac('');
      setTagged([]);
    }
  };

  return (
    <form onSubmit={submit} className="stack" aria-label="Attach a network">
      <div className="row" style={{ alignItems: 'flex-start' }}>
        <Field id={`${id}-network`} label="Network">
          {(control) => (
            <select {...control} value={network} onChange={(e) => setNetwork(e.target.value)} required>
              <option value="">Choose a network…</option>
              {networks.map((n) => (
                <option key={n.id} value={n.id}>
                  {n.name}
                  {n.vlan !== null ? ` — VLAN ${n.vlan}` : ` — ${n.network_type ?? 'untyped'}`}
                  {n.shared ? ' (shared)' : ''}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field id={`${id}-nic`} label="NIC" hint="Default: the first free NIC on the network's physical network.">
          {(control) => (
            <select {...control} value={mac} onChange={(e) => setMac(e.target.value)}>
              <option value="">Any free NIC</option>
              {free.map((n) => (
                <option key={n.id} value={n.mac}>{n.mac}</option>
              ))}
            </select>
          )}
        </Field>
      </div>
      {taggable.length > 0 && (
        <fieldset>
          <legend className="small">Tagged networks (a trunk: each on its VLAN)</legend>
          <div className="row">
            {taggable.map((n) => (
              <label key={n.id} className="small">
                <input
                  type="checkbox"
                  checked={tagged.includes(n.id)}
                  onChange={(e) => setTagged(e.target.checked ? [...tagged, n.id] : tagged.filter((t) => t !== n.id))}
                />{' '}
                {n.name} ({n.vlan})
              </label>
            ))}
          </div>
        </fieldset>
      )}
      <div>
        <button type="submit" disabled={busy || !network}>
          {busy ? 'Attaching…' : 'Attach'}
        </button>
      </div>
    </form>
  );
}
