import { useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import type { Schemas } from '../api/client';
import { ApiError, errorText, unwrap } from '../api/errors';
import { useApi, useViewer } from '../auth/session';
import '../components/lease-request.css';
import { useAction } from '../lib/use-action';
import { QuoteRefusals, groupRefusals } from '../components/quote-refusals';
import { UtcTimeField } from '../components/utc-time';
import { LeaseProjectPicker } from '../components/lease-project-picker';

type Quote = Schemas['Quote'];

/** The request body of POST /v1/leases and /v1/leases/quote. */
export interface QuoteRequest {
  name?: string;
  /** The project the lease is for (the operator's choice; the API refuses it to anyone else). */
  project?: string;
  start?: string;
  duration: string;
  nodes?: string[];
  groups?: { count: number; where: string }[];
}

export interface GroupDraft {
  /** Stable across adds and removes (React key, element ids). */
  readonly key: number;
  count: string;
  where: string;
}

export interface RequestDraft {
  name: string;
  /** The operator's chosen project id, or '' (none: the caller's own project). */
  project: string;
  groups: GroupDraft[];
  /** Node names or uuids, separated by commas or spaces. */
  nodes: string;
  startMode: 'now' | 'at';
  /** "YYYY-MM-DDTHH:mm", in UTC. */
  startUtc: string;
  duration: string;
}

export const QUOTE_DEBOUNCE_MS = 300;

/** "2030-01-02T10:00:00.000Z" → "2030-01-02T10:00" (what a datetime-local input holds), in UTC. */
export function toUtcInput(iso: string): string {
  return new Date(iso).toISOString().slice(0, 16);
}

/** "2030-01-02T10:00" read as UTC → RFC 3339; null when it is not a date and time. */
export function fromUtcInput(value: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) return null;
  const t = Date.parse(`${value.length === 16 ? `${value}:00` : value}Z`);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/** "2030-01-02 10:00 UTC" */
export function formatUtc(iso: string): string {
  return `${new Date(iso).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The same instant on the viewer's clock, with its zone: "Wed, 2 Jan, 11:00 (Europe/Berlin)". */
export function formatLocal(iso: string, locale?: string): string {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const text = new Intl.DateTimeFormat(locale, { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' }).format(
    new Date(iso),
  );
  return `${text} your time${zone ? ` (${zone})` : ''}`;
}

/**
 * The API request a draft stands for, and which form group each sent group came from (empty expressions are
 * not sent); or the reason it is not a request yet, said to the person filling it in.
 */
export function buildRequest(
  draft: RequestDraft,
  options: { projectRequired?: boolean } = {},
): { body: QuoteRequest; groupKeys: number[] } | { incomplete: string } {
  // Asked first: without a project, an operator's quote would only be refused.
  if (options.projectRequired && draft.project === '') return { incomplete: 'Choose the project the lease is for.' };
  const groups: { count: number; where: string }[] = [];
  const groupKeys: number[] = [];
  for (const g of draft.groups) {
    if (g.where.trim() === '') continue;
    const count = Number(g.count);
    if (!Number.isInteger(count) || count < 1) return { incomplete: 'Each group needs a count of at least 1.' };
    groups.push({ count, where: g.where.trim() });
    groupKeys.push(g.key);
  }
  const nodes = draft.nodes.split(/[\s,]+/).filter(Boolean);
  if (groups.length === 0 && nodes.length === 0) return { incomplete: 'Describe the nodes you need (a requirement) or name them to get a quote.' };
  if (draft.duration.trim() === '') return { incomplete: 'Give a duration, e.g. 4h or 2d.' };
  const body: QuoteRequest = { duration: draft.duration.trim() };
  if (draft.startMode === 'at') {
    const start = fromUtcInput(draft.startUtc);
    if (!start) return { incomplete: 'Give the start as a date and time (UTC), or choose “now”.' };
    body.start = start;
  }
  if (draft.name.trim()) body.name = draft.name.trim();
  if (draft.project !== '') body.project = draft.project;
  if (nodes.length > 0) body.nodes = nodes;
  if (groups.length > 0) body.groups = groups;
  return { body, groupKeys };
}

/**
 * Which form field an API error is about: "group:<key>" for a group's expression or count, or "duration",
 * "start", "nodes", "name"; null for the request as a whole. From error.details.field (the planner's) or the
 * first validation issue ("body.groups.0.count").
 */
export function errorField(err: unknown, groupKeys: readonly number[]): string | null {
  if (!(err instanceof ApiError) || err.status !== 400) return null;
  const issues = err.details.issues as { field?: string }[] | undefined;
  const raw = typeof err.details.field === 'string' ? err.details.field : issues?.[0]?.field?.replace(/^body\./, '');
  if (!raw) return null;
  const group = /^groups\.(\d+)/.exec(raw);
  if (group) {
    const key = groupKeys[Number(group[1])];
    return key === undefined ? null : `group:${key}`;
  }
  const top = raw.split('.')[0]!;
  return ['duration', 'start', 'end', 'nodes', 'name', 'project'].includes(top) ? (top === 'end' ? 'duration' : top) : null;
}

type QuoteState =
  | { status: 'idle'; note: string }
  | { status: 'quoting' }
  | { status: 'ok'; quote: Quote; groupKeys: number[] }
  | { status: 'error'; error: unknown; groupKeys: number[] };

function initialDraft(search: string, now: number): RequestDraft {
  const params = new URLSearchParams(search);
  const node = params.get('node');
  const start = params.get('start');
  const startMs = start ? Date.parse(start) : NaN;
  // A start that is (nearly) now is "now": by the time the form is sent it would be in the past.
  const later = !Number.isNaN(startMs) && startMs > now + 2 * 60_000;
  return {
    name: '',
    project: '',
    groups: node ? [] : [{ key: 1, count: '1', where: '' }],
    nodes: node ?? '',
    startMode: later ? 'at' : 'now',
    startUtc: later ? toUtcInput(start!) : toUtcInput(new Date(now + 3_600_000).toISOString()),
    duration: params.get('duration') ?? '1d',
  };
}

/** The form for project members, and for the operator with a project picker (it leases in a project's name). */
export function LeaseRequestPage() {
  const api = useApi();
  const viewer = useViewer();
  const operator = viewer.role === 'admin';
  const [, navigate] = useLocation();
  const search = useSearch();
  const [draft, setDraft] = useState<RequestDraft>(() => initialDraft(search, Date.now()));
  const nextKey = useRef(Math.max(1, ...draft.groups.map((g) => g.key)) + 1);
  const [quote, setQuote] = useState<QuoteState>({ status: 'idle', note: '' });
  const submit = useAction();
  const submittedKeys = useRef<number[]>([]);

  const request = useMemo(() => buildRequest(draft, { projectRequired: operator && viewer.project === null }), [draft, operator, viewer.project]);
  const requestKey = JSON.stringify('body' in request ? request.body : request);

  // The live quote: once the request has been still for 300 ms; a newer request aborts the one in flight.
  useEffect(() => {
    if (!('body' in request)) {
      setQuote({ status: 'idle', note: request.incomplete });
      return;
    }
    const { body, groupKeys } = request;
    const controller = new AbortController();
    const timer = setTimeout(() => {
      setQuote({ status: 'quoting' });
      api.POST('/v1/leases/quote', { body, signal: controller.signal }).then(
        (result) => {
          if (controller.signal.aborted) return;
          try {
            setQuote({ status: 'ok', quote: unwrap(result), groupKeys });
          } catch (error) {
            setQuote({ status: 'error', error, groupKeys });
          }
        },
        (error: unknown) => {
          if (!controller.signal.aborted) setQuote({ status: 'error', error, groupKeys });
        },
      );
    }, QUOTE_DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
    // requestKey stands for `request`: quote again only when what would be sent changes.
  }, [api, requestKey]);

  const update = (patch: Partial<RequestDraft>) => {
    submit.clear();
    setDraft((d) => ({ ...d, ...patch }));
  };
  const updateGroup = (key: number, patch: Partial<GroupDraft>) =>
    update({ groups: draft.groups.map((g) => (g.key === key ? { ...g, ...patch } : g)) });
  const addGroup = () => update({ groups: [...draft.groups, { key: nextKey.current++, count: '1', where: '' }] });
  const removeGroup = (key: number) => update({ groups: draft.groups.filter((g) => g.key !== key) });

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (!('body' in request)) return;
    const { body, groupKeys } = request;
    submittedKeys.current = groupKeys;
    await submit.run(async () => {
      const lease = unwrap(await api.POST('/v1/leases', { body }));
      navigate(`/leases/${lease.id}`);
    });
  }

  // Field errors: from the submit if it failed, else from the quote — each read against the groups it was sent with.
  const shownError = submit.error ?? (quote.status === 'error' ? quote.error : undefined);
  const keys = submit.error !== undefined ? submittedKeys.current : quote.status === 'error' ? quote.groupKeys : [];
  const mapped = shownError !== undefined ? errorField(shownError, keys) : null;
  // A group removed since keeps no error; the next quote (300 ms later) speaks for the request as it is now.
  const field = mapped?.startsWith('group:') && !draft.groups.some((g) => `group:${g.key}` === mapped) ? null : mapped;
  const fieldError = (name: string) => (field === name && shownError !== undefined ? errorText(shownError) : null);

  // The API numbers groups from 0 over the groups sent (empty ones are not), then one per named node; the form
  // (like the API's message and the CLI) numbers them from 1 as they stand on the page.
  const groupLabel = (keys: readonly number[]) => (group: number) => {
    const key = keys[group];
    const position = key === undefined ? -1 : draft.groups.findIndex((g) => g.key === key);
    return position >= 0 ? `Group ${position + 1}` : 'Named node';
  };

  const earliest =
    quote.status === 'error' && quote.error instanceof ApiError && typeof quote.error.details.earliest_start === 'string'
      ? quote.error.details.earliest_start
      : null;

  return (
    <section className="lease-request">
      <h1>Request a lease</h1>
      <form onSubmit={onSubmit} noValidate>
        <div className="lr-layout">
          <div className="lr-fields">
            {operator && (
              <LeaseProjectPicker value={draft.project} onChange={(project) => update({ project })} own={viewer.project} error={fieldError('project') ?? undefined} />
            )}
            <div className="field">
              <label htmlFor="lr-name">Name <span className="muted small">(optional)</span></label>
              <input id="lr-name" value={draft.name} onChange={(e) => update({ name: e.target.value })} maxLength={100} />
            </div>

            <fieldset className="lr-set">
              <legend>What you need</legend>
              <p className="muted small">
                Groups of nodes by requirement (all or nothing), e.g. <code>memory &gt;= 48GiB and gpus &gt;= 1</code>; facts:
                memory, disk, cpus, gpus, cpu_arch, resource_class, properties; <code>has TRAIT</code>; and/or/not.
              </p>
              {draft.groups.map((g, i) => {
                const err = fieldError(`group:${g.key}`);
                const errId = `lr-group-${g.key}-error`;
                return (
                  <div className="lr-group" key={g.key} role="group" aria-label={`Group ${i + 1}`}>
                    <div className="field lr-count">
                      <label htmlFor={`lr-group-${g.key}-count`}>
                        <span className="sr-only">Group {i + 1} </span>Count
                      </label>
                      <input
                        id={`lr-group-${g.key}-count`}
                        type="number"
                        inputMode="numeric"
                        min={1}
                        max={1000}
                        value={g.count}
                        onChange={(e) => updateGroup(g.key, { count: e.target.value })}
                      />
                    </div>
                    <div className="field grow">
                      <label htmlFor={`lr-group-${g.key}-where`}>
                        <span className="sr-only">Group {i + 1} </span>Requirement expression
                      </label>
                      <input
                        id={`lr-group-${g.key}-where`}
                        className="mono"
                        placeholder="memory >= 48GiB and gpus >= 1"
                        value={g.where}
                        onChange={(e) => updateGroup(g.key, { where: e.target.value })}
                        aria-invalid={err ? true : undefined}
                        aria-describedby={err ? errId : undefined}
                        spellCheck={false}
                        autoCapitalize="off"
                      />
                      {err && (
                        <p id={errId} className="error mono lr-field-error">
                          {err}
                        </p>
                      )}
                    </div>
                    <button type="button" className="secondary small lr-remove" onClick={() => removeGroup(g.key)} aria-label={`Remove group ${i + 1}`}>
                      Remove
                    </button>
                  </div>
                );
              })}
              <button type="button" className="secondary small" onClick={addGroup}>
                Add a group
              </button>
              <TextField
                id="lr-nodes"
                label="Named nodes"
                hint="Names or uuids, separated by commas or spaces; each is leased as well as the groups."
                value={draft.nodes}
                onChange={(nodes) => update({ nodes })}
                error={fieldError('nodes')}
                mono
              />
            </fieldset>

            <fieldset className="lr-set">
              <legend>When</legend>
              <div className="row" role="radiogroup" aria-label="Start">
                <label className="lr-radio">
                  <input type="radio" name="lr-start" checked={draft.startMode === 'now'} onChange={() => update({ startMode: 'now' })} /> Now
                </label>
                <label className="lr-radio">
                  <input type="radio" name="lr-start" checked={draft.startMode === 'at'} onChange={() => update({ startMode: 'at' })} /> At a time
                </label>
              </div>
              {draft.startMode === 'at' && (
                <UtcTimeField
                  id="lr-start"
                  label="Start"
                  value={draft.startUtc}
                  onChange={(startUtc) => update({ startUtc })}
                  emptyMeaning="enter a date and time, or choose “now”"
                  error={fieldError('start') ?? undefined}
                />
              )}
              <TextField
                id="lr-duration"
                label="Duration"
                hint="e.g. 4h, 2d, 1h30m, or ISO 8601 like P2D."
                value={draft.duration}
                onChange={(duration) => update({ duration })}
                error={fieldError('duration')}
                mono
              />
            </fieldset>
          </div>

          <QuotePanel
            quote={quote}
            earliest={earliest}
            fieldHandled={field !== null}
            onUseEarliest={(iso) => update({ startMode: 'at', startUtc: toUtcInput(iso) })}
            groupLabel={groupLabel}
          />
        </div>

        {submit.error !== undefined && field === null && (
          <div role="alert">
            {groupRefusals(submit.error) ? (
              <QuoteRefusals error={submit.error} groupLabel={groupLabel(submittedKeys.current)} />
            ) : (
              <p className="error-box">{errorText(submit.error)}</p>
            )}
          </div>
        )}
        <div className="row lr-submit">
          <button type="submit" disabled={!('body' in request) || submit.busy}>
            {submit.busy ? 'Requesting…' : 'Request lease'}
          </button>
          <Link href="/timeline">Back to the timeline</Link>
        </div>
      </form>
    </section>
  );
}

function TextField(props: { id: string; label: string; hint: string; value: string; onChange: (v: string) => void; error: string | null; mono?: boolean }) {
  const { id, label, hint, value, onChange, error, mono } = props;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        className={mono ? 'mono' : undefined}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-hint ${id}-error` : `${id}-hint`}
        spellCheck={false}
        autoCapitalize="off"
      />
      <p id={`${id}-hint`} className="muted small">
        {hint}
      </p>
      {error && (
        <p id={`${id}-error`} className="error mono lr-field-error">
          {error}
        </p>
      )}
    </div>
  );
}

function QuotePanel({
  quote,
  earliest,
  fieldHandled,
  onUseEarliest,
  groupLabel,
}: {
  quote: QuoteState;
  /** How the quote's group numbers (sent groups, then named nodes) read in the form. */
  groupLabel: (keys: readonly number[]) => (group: number) => string;
  earliest: string | null;
  /** The error is shown next to its field already. */
  fieldHandled: boolean;
  onUseEarliest: (iso: string) => void;
}) {
  return (
    <aside className="lr-quote card" aria-labelledby="lr-quote-title">
      <h2 id="lr-quote-title">Quote</h2>
      <div aria-live="polite" aria-atomic="true">
        {quote.status === 'idle' && <p className="muted">{quote.note}</p>}
        {quote.status === 'quoting' && <p className="muted" aria-busy="true">Checking…</p>}
        {quote.status === 'ok' && <QuoteResult quote={quote.quote} groupLabel={groupLabel(quote.groupKeys)} />}
        {quote.status === 'error' && (
          <>
            <p className="lr-why">{fieldHandled ? 'The request has a mistake: see the field marked above.' : 'Not possible as asked:'}</p>
            {!fieldHandled && <QuoteRefusals error={quote.error} groupLabel={groupLabel(quote.groupKeys)} />}
            {earliest && (
              <div className="stack">
                <p className="lr-earliest">
                  Earliest start: <strong>{formatUtc(earliest)}</strong>
                  <br />
                  <span className="muted small">{formatLocal(earliest)}</span>
                </p>
                <button type="button" className="small" onClick={() => onUseEarliest(earliest)}>
                  Use the earliest start
                </button>
              </div>
            )}
          </>
        )}
      </div>
    </aside>
  );
}

function QuoteResult({ quote, groupLabel }: { quote: Quote; groupLabel: (group: number) => string }) {
  const byGroup = new Map<number, string[]>();
  for (const a of quote.allocations) byGroup.set(a.group, [...(byGroup.get(a.group) ?? []), a.node_name ?? a.node_id]);
  return (
    <>
      <p className="ok">Available: {quote.allocations.length === 1 ? '1 node' : `${quote.allocations.length} nodes`} would be leased.</p>
      <ul className="lr-picked" aria-label="Nodes that would be picked">
        {[...byGroup].map(([group, names]) => (
          <li key={group}>
            <span className="muted">{groupLabel(group)}:</span> <span className="mono">{names.join(', ')}</span>
          </li>
        ))}
      </ul>
      <dl className="meta">
        <div>
          <dt>From</dt>
          <dd>
            {formatUtc(quote.start)}
            <br />
            <span className="muted small">{formatLocal(quote.start)}</span>
          </dd>
        </div>
        <div>
          <dt>Until</dt>
          <dd>
            {formatUtc(quote.end)}
            <br />
            <span className="muted small">{formatLocal(quote.end)}</span>
          </dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd className="mono">{quote.duration}</dd>
        </div>
      </dl>
    </>
  );
}
