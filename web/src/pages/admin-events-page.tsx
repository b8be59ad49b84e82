import { useMemo, useState, type CSSProperties, type FormEvent } from 'react';
import { Link } from 'wouter';
import type { Api, Schemas } from '../api/client';
import { unwrap } from '../api/errors';
import { loadProjects } from '../api/projects';
import { useResource } from '../api/use-resource';
import { useApi } from '../auth/session';
import { ErrorNotice } from '../components/error-notice';
import { Field, explainedByFields, fieldErrors } from '../components/field';
import { UtcTimeField, utcInputToIso } from '../components/utc-time';
import { shortId } from '../lib/format';
import { useAction } from '../lib/use-action';

type Event = Schemas['Event'];
type EventQuery = Record<string, string | number>;

/** The filters GET /v1/events takes (src/api/routes/events.ts); empty ones are left out. */
interface Filters {
  type: string;
  node_id: string;
  lease_id: string;
  project: string;
  since: string;
  until: string;
}
const NO_FILTERS: Filters = { type: '', node_id: '', lease_id: '', project: '', since: '', until: '' };
const PAGE_SIZE = 50;
const FIELDS = ['type', 'node_id', 'lease_id', 'project', 'since', 'until'];
/** Event type prefixes (the API matches "lease" as lease.*), for the type box's suggestions. */
const TYPE_SUGGESTIONS = ['lease', 'allocation', 'offer', 'node', 'console', 'reconcile', 'lease.created', 'lease.extended', 'lease.cancelled', 'allocation.released', 'node.quarantined'];
const PRE: CSSProperties = { whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', margin: '0.25rem 0 0', maxWidth: '40rem' };

function toQuery(f: Filters): EventQuery {
  const q: EventQuery = { limit: PAGE_SIZE };
  for (const key of ['type', 'node_id', 'lease_id', 'project'] as const) if (f[key].trim()) q[key] = f[key].trim();
  const since = utcInputToIso(f.since);
  const until = utcInputToIso(f.until);
  if (since) q.since = since;
  if (until) q.until = until;
  return q;
}

/** The query of the API's `next` link, exactly as given: the same filters with the marker moved on. */
function queryOfNext(next: string): EventQuery {
  const q: EventQuery = {};
  for (const [key, value] of new URL(next, 'http://x').searchParams) q[key] = value;
  return q;
}

async function fetchEvents(api: Api, query: EventQuery, signal?: AbortSignal): Promise<{ events: Event[]; next: string | null }> {
  // The query's keys are the route's own (toQuery, or the API's next link); the client's types cannot follow a link.
  const page = unwrap(await api.GET('/v1/events', { params: { query: query as never }, signal }));
  return { events: page.events, next: page.next };
}

/** Events come in bursts: the second matters. */
function formatSecond(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/**
 * Names, not uuids: the API sends each event's node and project names and its message with the ids it mentions
 * replaced by names (display_message); the recorded message, with its ids, stays in the message's tooltip.
 */
function EventRow({ event }: { event: Event }) {
  const message = event.display_message || event.message;
  const hasDetails = Object.keys(event.details).length > 0;
  return (
    <tr>
      <th scope="row" title={event.at}>
        <time dateTime={event.at}>{formatSecond(event.at)}</time>
        <div className="muted small mono">#{event.seq}</div>
      </th>
      <td data-label="Type">
        <span className="mono">{event.type}</span>
        {event.outcome === 'error' && <div><span className="badge badge-failed">error</span></div>}
      </td>
      <td data-label="Actor">{event.actor}</td>
      <td data-label="About">
        <ul className="small" style={{ listStyle: 'none', margin: 0, padding: 0 }}>
          {event.lease_id && (
            <li>lease <Link href={`/leases/${event.lease_id}`} className="mono">{shortId(event.lease_id)}</Link></li>
          )}
          {event.node_id && <li>node <span className="mono" title={event.node_id}>{event.node_name ?? shortId(event.node_id)}</span></li>}
          {event.project_id && <li>project <span title={event.project_id}>{event.project_name ?? shortId(event.project_id)}</span></li>}
          {event.offer_id && <li>offer <span className="mono" title={event.offer_id}>{shortId(event.offer_id)}</span></li>}
          {!event.lease_id && !event.node_id && !event.project_id && !event.offer_id && <li className="muted">—</li>}
        </ul>
      </td>
      <td data-label="Message">
        <div title={message !== event.message ? event.message : undefined}>{message || <span className="muted">—</span>}</div>
        {hasDetails && (
          <details>
            <summary className="small">Details</summary>
            <pre className="mono small" style={PRE}>{JSON.stringify(event.details, null, 2)}</pre>
          </details>
        )}
      </td>
    </tr>
  );
}

export function AdminEventsPage() {
  const api = useApi();
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [applied, setApplied] = useState<Filters>(NO_FILTERS);
  const query = useMemo(() => toQuery(applied), [applied]);
  const first = useResource((signal) => fetchEvents(api, query, signal), [query]);
  const projects = useResource((signal) => loadProjects(api, signal), []);
  // Pages loaded with "Load more", for the query they belong to (a new filter starts over from the first page).
  const [more, setMore] = useState<{ key: string; events: Event[]; next: string | null } | null>(null);
  const loadMore = useAction();
  const key = JSON.stringify(query);
  const extra = more?.key === key ? more : null;
  const events = [...(first.data?.events ?? []), ...(extra?.events ?? [])];
  const next = extra ? extra.next : (first.data?.next ?? null);
  const errors = fieldErrors(first.error);
  const set = (k: keyof Filters) => (value: string) => setDraft((d) => ({ ...d, [k]: value }));

  function apply(event: FormEvent) {
    event.preventDefault();
    setApplied({ ...draft });
  }

  function clear() {
    setDraft(NO_FILTERS);
    setApplied(NO_FILTERS);
  }

  function followNext() {
    if (!next) return;
    void loadMore.run(async () => {
      const page = await fetchEvents(api, queryOfNext(next));
      setMore({ key, events: [...(extra?.events ?? []), ...page.events], next: page.next });
    });
  }

  const filtered = JSON.stringify(applied) !== JSON.stringify(NO_FILTERS);

  return (
    <section>
      <h1>Events</h1>
      <p className="muted">The audit log, newest first: every lease and offer change, node action, engine step and repair.</p>
      <form onSubmit={apply} className="card stack" aria-label="Filter events" noValidate style={{ justifyItems: 'stretch' }}>
        <div className="row" style={{ alignItems: 'flex-start' }}>
          <Field id="events-type" label="Type" hint="A type or a prefix: lease, lease.created." error={errors.type}>
            {(control) => (
              <>
                <input {...control} list="events-type-list" value={draft.type} onChange={(e) => set('type')(e.target.value)} spellCheck={false} autoCapitalize="off" />
                <datalist id="events-type-list">
                  {TYPE_SUGGESTIONS.map((t) => (
                    <option key={t} value={t} />
                  ))}
                </datalist>
              </>
            )}
          </Field>
          <Field id="events-node" label="Node" hint="Uuid or name." error={errors.node_id}>
            {(control) => <input {...control} value={draft.node_id} onChange={(e) => set('node_id')(e.target.value)} spellCheck={false} autoCapitalize="off" />}
          </Field>
          <Field id="events-lease" label="Lease" hint="Lease id." error={errors.lease_id}>
            {(control) => <input {...control} value={draft.lease_id} onChange={(e) => set('lease_id')(e.target.value)} spellCheck={false} autoCapitalize="off" />}
          </Field>
          <Field id="events-project" label="Project" error={errors.project}>
            {(control) => (
              <select {...control} value={draft.project} onChange={(e) => set('project')(e.target.value)}>
                <option value="">Any project</option>
                {(projects.data ?? []).map((p) => (
                  <option key={p.id} value={p.id}>{p.name}</option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <div className="row" style={{ alignItems: 'flex-start' }}>
          <UtcTimeField id="events-since" label="Since" value={draft.since} onChange={set('since')} emptyMeaning="from the first event" error={errors.since} />
          <UtcTimeField id="events-until" label="Until" value={draft.until} onChange={set('until')} emptyMeaning="up to now" error={errors.until} />
        </div>
        <div className="row">
          <button type="submit">Apply filters</button>
          {filtered && <button type="button" className="secondary" onClick={clear}>Clear filters</button>}
          <button type="button" className="secondary" onClick={first.reload}>Refresh</button>
        </div>
      </form>

      <div style={{ marginTop: '1rem' }}>
        {first.loading && <p aria-busy="true">Loading events…</p>}
        {first.error !== undefined && !explainedByFields(first.error, FIELDS) && (
          <ErrorNotice error={first.error} retry={first.reload} title="Could not load the events" />
        )}
        {first.error !== undefined && explainedByFields(first.error, FIELDS) && (
          <p className="error" role="alert">The server refused a filter: see the marked field.</p>
        )}
        {first.data && events.length === 0 && <p className="empty">{filtered ? 'No event matches these filters.' : 'No events yet.'}</p>}
        {events.length > 0 && (
          <>
            <p className="muted small" aria-live="polite">
              {events.length} event{events.length === 1 ? '' : 's'} shown{next ? ', more older ones' : ''}.
            </p>
            <div className="table-wrap" role="region" aria-label="Events" tabIndex={0}>
              <table className="table stacked">
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Type</th>
                    <th scope="col">Actor</th>
                    <th scope="col">About</th>
                    <th scope="col">Message</th>
                  </tr>
                </thead>
                <tbody>
                  {events.map((e) => (
                    <EventRow key={e.seq} event={e} />
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
        {next && first.data && (
          <div className="row" style={{ marginTop: '0.75rem' }}>
            <button type="button" className="secondary" onClick={followNext} disabled={loadMore.busy}>
              {loadMore.busy ? 'Loading…' : 'Load more'}
            </button>
          </div>
        )}
        {loadMore.error !== undefined && <ErrorNotice error={loadMore.error} retry={followNext} title="Could not load more events" />}
      </div>
    </section>
  );
}
