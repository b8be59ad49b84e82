import { useMemo, useState, type CSSProperties, type FormEvent } from 'react';
import type { Api, Node, Offer } from '../api/client';
import { oneOffer } from '../api/offers';
import { unwrap } from '../api/errors';
import { fetchAll } from '../api/fetch-all';
import { loadProjectNames } from '../api/projects';
import { useResource } from '../api/use-resource';
import { useApi, useViewer } from '../auth/session';
import { ConfirmButton } from '../components/confirm-button';
import { DurationText } from '../components/duration';
import { ErrorNotice } from '../components/error-notice';
import { Field, explainedByFields, fieldErrors } from '../components/field';
import { EMPTY_EXTENSION, ExtensionPolicyFields, extensionBody, type ExtensionDraft } from '../components/extension-policy-fields';
import { StateBadge } from '../components/lease-state';
import { UtcTimeField, utcInputToIso } from '../components/utc-time';
import { formatTime, shortId } from '../lib/format';
import { useAction } from '../lib/use-action';
import { canRoleAct } from '../nav';

type View = 'in-force' | 'all' | Offer['status'];
const IN_FORCE = new Set<Offer['status']>(['active', 'scheduled']);
const PLAIN_LIST: CSSProperties = { listStyle: 'none', margin: 0, padding: 0 };
const FIELDS = ['node_id', 'start', 'end', 'max_lease_duration', 'min_lease_duration', 'allowed_projects', 'extension_window', 'extension_max_ahead', 'max_total_length', 'weekly', 'timezone'] as const;

/** The offers of the viewer's project (the operator: of every project, or of `owner`). */
async function loadOffers(api: Api, owner: string | undefined, signal: AbortSignal) {
  return fetchAll(async (marker) => {
    const page = unwrap(await api.GET('/v1/offers', { params: { query: { owner, limit: 1000, marker } }, signal }));
    return { items: page.offers, next: page.next };
  }, 10);
}

/** The nodes the viewer may offer: its project's (the operator: every node that has an owner project). */
async function loadOfferableNodes(api: Api, owner: string | undefined, signal: AbortSignal): Promise<Node[]> {
  const nodes = await fetchAll(async (marker) => {
    const page = unwrap(await api.GET('/v1/nodes', { params: { query: { owner, limit: 1000, marker } }, signal }));
    return { items: page.nodes, next: page.next };
  });
  return nodes.items.filter((n) => n.owner_project !== null);
}

function FreeWindows({ windows }: { windows: Offer['free_windows'] }) {
  if (windows.length === 0) return <span className="muted">none</span>;
  const shown = windows.slice(0, 3);
  return (
    <ul style={PLAIN_LIST} className="small">
      {shown.map((w) => (
        <li key={w.start}>
          <span title={w.start}>{formatTime(w.start)}</span> → {w.end ? <span title={w.end}>{formatTime(w.end)}</span> : 'open-ended'}
        </li>
      ))}
      {windows.length > shown.length && <li className="muted">and {windows.length - shown.length} more</li>}
    </ul>
  );
}

function AllowedProjects({ ids, names }: { ids: string[] | null; names: ReadonlyMap<string, string> }) {
  if (ids === null) return <span>every project</span>;
  if (ids.length === 0) return <span className="muted">no project</span>;
  return (
    <ul className="chips" aria-label="Allowed projects">
      {ids.map((id) => (
        <li key={id} className="chip" title={id}>
          {names.get(id) ?? shortId(id)}
        </li>
      ))}
    </ul>
  );
}

interface Draft {
  node: string;
  start: string;
  end: string;
  max: string;
  min: string;
  allowed: string;
  /** Weekly rules separated by semicolons or lines ("mon-fri 18:00-08:00; sat-sun"). */
  weekly: string;
  timezone: string;
  extension: ExtensionDraft;
}
const EMPTY: Draft = { node: '', start: '', end: '', max: '', min: '', allowed: '', weekly: '', timezone: '', extension: EMPTY_EXTENSION };

/** The weekly rules typed in the form: one per line or semicolon. */
function weeklyRules(text: string): string[] {
  return text.split(/[;\n]+/).map((r) => r.trim()).filter(Boolean);
}

function NewOfferForm({ api, nodes, showOwner, onCreated }: { api: Api; nodes: Node[]; showOwner: boolean; onCreated: () => void }) {
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const action = useAction();
  const errors = fieldErrors(action.error);
  const set = (key: Exclude<keyof Draft, 'extension'>) => (value: string) => setDraft((d) => ({ ...d, [key]: value }));
  const node = draft.node || nodes[0]?.id || '';

  function submit(event: FormEvent) {
    event.preventDefault();
    void action.run(async () => {
      const body: {
        node_id: string;
        start?: string;
        end?: string;
        max_lease_duration?: string;
        min_lease_duration?: string;
        allowed_projects?: string[];
        weekly?: string[];
        timezone?: string;
      } & ReturnType<typeof extensionBody> = { node_id: node, ...extensionBody(draft.extension) };
      const start = utcInputToIso(draft.start);
      const end = utcInputToIso(draft.end);
      if (start) body.start = start;
      if (end) body.end = end;
      if (draft.max.trim()) body.max_lease_duration = draft.max.trim();
      if (draft.min.trim()) body.min_lease_duration = draft.min.trim();
      const allowed = draft.allowed.split(/[\s,]+/).filter(Boolean);
      if (allowed.length > 0) body.allowed_projects = allowed;
      const weekly = weeklyRules(draft.weekly);
      if (weekly.length > 0) body.weekly = weekly;
      // A timezone alone means nothing (the server says so): sent only with rules.
      if (weekly.length > 0 && draft.timezone.trim()) body.timezone = draft.timezone.trim();
      const offer = oneOffer(unwrap(await api.POST('/v1/offers', { body })));
      setDraft({ ...EMPTY, node });
      onCreated();
      return `${offer.node_name ?? offer.node_id} is offered (${offer.status}).`;
    });
  }

  return (
    <section className="card" aria-labelledby="new-offer-title" style={{ marginTop: '1.5rem' }}>
      <h2 id="new-offer-title" style={{ marginTop: 0 }}>Offer a node</h2>
      <form onSubmit={submit} className="stack" noValidate>
        <div className="row" style={{ alignItems: 'flex-start' }}>
          <Field id="offer-node" label="Node" error={errors.node_id}>
            {(control) => (
              <select {...control} value={node} onChange={(e) => set('node')(e.target.value)} required>
                {nodes.map((n) => (
                  <option key={n.id} value={n.id}>
                    {n.name ?? n.id}
                    {showOwner && n.owner_project ? ` (${n.owner_project.name})` : ''}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <UtcTimeField id="offer-start" label="Start" value={draft.start} onChange={set('start')} emptyMeaning="now" error={errors.start} />
          <UtcTimeField id="offer-end" label="End" value={draft.end} onChange={set('end')} emptyMeaning="open-ended" error={errors.end} />
        </div>
        <div className="row" style={{ alignItems: 'flex-start' }}>
          <Field id="offer-max" label="Longest lease" hint='e.g. 5d or P5D; empty: no limit' error={errors.max_lease_duration}>
            {(control) => <input {...control} value={draft.max} onChange={(e) => set('max')(e.target.value)} spellCheck={false} autoCapitalize="off" />}
          </Field>
          <Field id="offer-min" label="Shortest lease" hint="e.g. 1h; empty: no minimum" error={errors.min_lease_duration}>
            {(control) => <input {...control} value={draft.min} onChange={(e) => set('min')(e.target.value)} spellCheck={false} autoCapitalize="off" />}
          </Field>
          <Field
            id="offer-allowed"
            className="grow"
            label="Projects allowed to lease it"
            hint="Names or ids, separated by commas or spaces; empty: every project."
            error={errors.allowed_projects}
          >
            {(control) => <input {...control} value={draft.allowed} onChange={(e) => set('allowed')(e.target.value)} spellCheck={false} autoCapitalize="off" />}
          </Field>
        </div>
        <div className="row" style={{ alignItems: 'flex-start' }}>
          <Field
            id="offer-weekly"
            className="grow"
            label="Weekly windows"
            hint='Only at these times each week, e.g. "mon-fri 18:00-08:00; sat-sun" (an end before the start runs into the next day); empty: the whole window.'
            error={errors.weekly}
          >
            {(control) => <input {...control} value={draft.weekly} onChange={(e) => set('weekly')(e.target.value)} spellCheck={false} autoCapitalize="off" />}
          </Field>
          <Field id="offer-timezone" label="Timezone" hint="IANA name, e.g. Europe/Berlin; empty: UTC" error={errors.timezone}>
            {(control) => <input {...control} value={draft.timezone} onChange={(e) => set('timezone')(e.target.value)} spellCheck={false} autoCapitalize="off" />}
          </Field>
        </div>
        <ExtensionPolicyFields draft={draft.extension} onChange={(extension) => setDraft((d) => ({ ...d, extension }))} errors={errors} />
        <div className="row">
          <button type="submit" disabled={action.busy || !node}>
            {action.busy ? 'Offering…' : 'Offer node'}
          </button>
          {action.done && (
            <p className="ok" role="status">
              {action.done}
            </p>
          )}
        </div>
        {action.error !== undefined && !explainedByFields(action.error, FIELDS) && <ErrorNotice error={action.error} title="Not offered" />}
        {action.error !== undefined && explainedByFields(action.error, FIELDS) && (
          <p className="error small" role="alert">
            Not offered: see the marked field.
          </p>
        )}
      </form>
    </section>
  );
}

export function OffersPage() {
  const api = useApi();
  const viewer = useViewer();
  const isAdmin = viewer.role === 'admin';
  const [view, setView] = useState<View>('in-force');
  const [ownerFilter, setOwnerFilter] = useState('');
  const owner = isAdmin ? ownerFilter || undefined : viewer.project?.id;
  const offers = useResource((signal) => loadOffers(api, owner, signal), [owner]);
  const nodes = useResource((signal) => loadOfferableNodes(api, isAdmin ? undefined : viewer.project?.id, signal), [viewer.userId]);
  const projects = useResource((signal) => loadProjectNames(api, viewer, signal), [viewer.userId]);
  const withdraw = useAction();
  const names = projects.data ?? new Map<string, string>();

  const shown = useMemo(() => {
    const items = (offers.data?.items ?? []).filter((o) => (view === 'all' ? true : view === 'in-force' ? IN_FORCE.has(o.status) : o.status === view));
    return items.sort((a, b) => (a.node_name ?? a.node_id).localeCompare(b.node_name ?? b.node_id) || a.start.localeCompare(b.start));
  }, [offers.data, view]);

  const canAct = canRoleAct(viewer);
  const remove = (offer: Offer) =>
    withdraw.run(async () => {
      unwrap(await api.DELETE('/v1/offers/{id}', { params: { path: { id: offer.id } } }));
      offers.reload();
      return `The offer of ${offer.node_name ?? offer.node_id} is withdrawn; its leases stay.`;
    });

  return (
    <section>
      <h1>Offers</h1>
      <p className="muted">
        Nodes {isAdmin ? 'projects have' : `${viewer.project?.name ?? 'your project'} has`} put in the pool, under which policy, and when
        they are still free.
      </p>
      <div className="toolbar">
        {isAdmin && (
          <div className="field">
            <label htmlFor="offers-owner">Owner</label>
            <select id="offers-owner" value={ownerFilter} onChange={(e) => setOwnerFilter(e.target.value)}>
              <option value="">Every project</option>
              {[...names.entries()]
                .sort((a, b) => a[1].localeCompare(b[1]))
                .map(([id, name]) => (
                  <option key={id} value={id}>{name}</option>
                ))}
            </select>
          </div>
        )}
        <div className="field">
          <label htmlFor="offers-view">Show</label>
          <select id="offers-view" value={view} onChange={(e) => setView(e.target.value as View)}>
            <option value="in-force">In force (active and scheduled)</option>
            <option value="active">Active</option>
            <option value="scheduled">Scheduled</option>
            <option value="expired">Expired</option>
            <option value="withdrawn">Withdrawn</option>
            <option value="all">All</option>
          </select>
        </div>
        <button type="button" className="secondary toolbar-button" onClick={offers.reload}>Refresh</button>
      </div>

      {withdraw.done && <p className="ok" role="status">{withdraw.done}</p>}
      {withdraw.error !== undefined && <ErrorNotice error={withdraw.error} title="Not withdrawn" />}

      {offers.loading && <p aria-busy="true">Loading offers…</p>}
      {offers.error !== undefined && <ErrorNotice error={offers.error} retry={offers.reload} title="Could not load the offers" />}
      {offers.data && shown.length === 0 && (
        <p className="empty">
          {view === 'in-force' ? 'No offer is in force.' : 'No offers here.'}
          {canAct && ' Offer a node below to let other projects lease it.'}
        </p>
      )}
      {shown.length > 0 && (
        <div className="table-wrap" role="region" aria-label="Offers" tabIndex={0}>
          <table className="table stacked">
            <thead>
              <tr>
                <th scope="col">Node</th>
                {isAdmin && <th scope="col">Owner</th>}
                <th scope="col">Window</th>
                <th scope="col">Status</th>
                <th scope="col">Lease length</th>
                <th scope="col">Who may lease</th>
                <th scope="col">Free</th>
                {canAct && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {shown.map((offer) => (
                <tr key={offer.id}>
                  <th scope="row" className="mono">{offer.node_name ?? offer.node_id}</th>
                  {isAdmin && <td data-label="Owner">{names.get(offer.project_id) ?? shortId(offer.project_id)}</td>}
                  <td data-label="Window">
                    <div title={offer.start}>from {formatTime(offer.start)}</div>
                    <div title={offer.end ?? undefined}>{offer.end ? `until ${formatTime(offer.end)}` : 'open-ended'}</div>
                    {offer.weekly_summary && <div className="small" title={(offer.weekly ?? []).join('; ')}>{offer.weekly_summary}</div>}
                  </td>
                  <td data-label="Status">
                    <StateBadge state={offer.status} />
                    {offer.withdrawn_at && <div className="muted small" title={offer.withdrawn_at}>{formatTime(offer.withdrawn_at)}</div>}
                  </td>
                  <td data-label="Length">
                    <div>at most <DurationText value={offer.max_lease_duration} /></div>
                    <div>at least <DurationText value={offer.min_lease_duration} none="any" /></div>
                    {/* The extension policy only when set: most offers have none. */}
                    {offer.extension_window && <div>extend within <DurationText value={offer.extension_window} /> of the end</div>}
                    {offer.extension_max_ahead && <div>extend up to <DurationText value={offer.extension_max_ahead} /> ahead</div>}
                    {offer.max_total_length && <div>at most <DurationText value={offer.max_total_length} /> in total</div>}
                  </td>
                  <td data-label="Who">
                    <AllowedProjects ids={offer.allowed_projects} names={names} />
                  </td>
                  <td data-label="Free">
                    <FreeWindows windows={offer.free_windows} />
                  </td>
                  {canAct && (
                    <td data-label="Actions">
                      {IN_FORCE.has(offer.status) ? (
                        <ConfirmButton
                          danger
                          className="danger small"
                          label="Withdraw"
                          question={`Withdraw the offer of ${offer.node_name ?? offer.node_id}? Its leases stay; no new ones.`}
                          confirmLabel="Withdraw it"
                          disabled={withdraw.busy}
                          onConfirm={() => remove(offer)}
                        />
                      ) : (
                        <span className="muted small">—</span>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {offers.data?.truncated && <p className="muted small">Showing the first 10,000 offers.</p>}

      {canAct ? (
        <>
          {nodes.loading && <p aria-busy="true">Loading your nodes…</p>}
          {nodes.error !== undefined && <ErrorNotice error={nodes.error} retry={nodes.reload} title="Could not load the nodes to offer" />}
          {nodes.data && nodes.data.length === 0 && (
            <p className="empty">
              {isAdmin ? 'No node has an owner project yet: set one first (leasehold node set-owner).' : 'Your project owns no nodes to offer.'}
            </p>
          )}
          {nodes.data && nodes.data.length > 0 && <NewOfferForm api={api} nodes={nodes.data} showOwner={isAdmin} onCreated={offers.reload} />}
        </>
      ) : (
        <p className="muted">Readers see the offers; a member of the project offers and withdraws nodes.</p>
      )}
    </section>
  );
}
