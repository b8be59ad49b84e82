/**
 * The Metrics port: what the engine, the reconciler, the backends' clients and the API report as it happens. The
 * Prometheus implementation lives in server/ (prom-client, one registry per process wiring); domain code only
 * sees this interface, so it needs no global registry and tests pass `noMetrics` or their own.
 *
 * Labels are always low-cardinality: route and path *templates*, kinds, outcomes, states — never an id, a name
 * or a token (the callers normalise with `pathTemplate`).
 */
export interface Metrics {
  /** One HTTP request answered by the API: the matched route's template (`/v1/leases/:id`), never the raw path. */
  httpRequest(request: { readonly method: string; readonly route: string; readonly status: number; readonly seconds: number }): void;
  /** One run of a lease task: its lag (now − its due time when it ran) and how the run ended. */
  taskRun(run: { readonly kind: string; readonly outcome: TaskRunOutcome; readonly lagSeconds: number }): void;
  /** A node cleaned and available again: seconds from its allocation's end (when the end task fell due). */
  cleaned(seconds: number): void;
  /** Repairs the reconciler carried out, by kind. */
  reconcileRepairs(kind: string, count: number): void;
  /** One reconcile pass: `ok`, `failed` (the driver or the store could not be read) or `skipped` (another replica's). */
  reconcilePass(outcome: 'ok' | 'failed' | 'skipped', seconds: number): void;
  /**
   * One HTTP request to a backend (each attempt, retries included): `error` is null for an answer below 400, else
   * the HTTP status (`409`), `network` or `timeout`.
   */
  backendRequest(call: {
    readonly backend: 'ironic' | 'keystone';
    readonly method: string;
    readonly path: string;
    readonly seconds: number;
    readonly error: string | null;
  }): void;
}

/** How one run of a lease task ended: done, handed back for later, failed (retried with backoff), or taken over. */
export type TaskRunOutcome = 'done' | 'later' | 'failed' | 'claim_lost';

/** Scraping: the registry's text in Prometheus's exposition format. */
export interface MetricsEndpoint {
  readonly contentType: string;
  render(): Promise<string>;
}

/** Reports nothing: for wiring without metrics (tests of other things, tools). */
export const noMetrics: Metrics = {
  httpRequest: () => undefined,
  taskRun: () => undefined,
  cleaned: () => undefined,
  reconcileRepairs: () => undefined,
  reconcilePass: () => undefined,
  backendRequest: () => undefined,
};

/** Paths deeper than this are cut (`…`): a label never grows with what a client sends. */
const MAX_SEGMENTS = 6;

/**
 * A request path as a label: every segment outside `vocabulary` (the backend's fixed words: `nodes`, `states`,
 * ...) becomes `{id}`, so node uuids and names, VIF ids, traits and anything a gateway client made up collapse into
 * one template: `/v1/nodes/gpu-01/states/power` → `/v1/nodes/{id}/states/power`. The query is dropped.
 */
export function pathTemplate(path: string, vocabulary: ReadonlySet<string>): string {
  const segments = path.split('?')[0]!.split('/').filter((s) => s !== '');
  const kept = segments.slice(0, MAX_SEGMENTS).map((s) => (vocabulary.has(s) ? s : '{id}'));
  return `/${kept.join('/')}${segments.length > MAX_SEGMENTS ? '/…' : ''}`;
}

/** HTTP methods as labels: anything else a client sends is `other`. */
const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function methodLabel(method: string): string {
  const upper = method.toUpperCase();
  return METHODS.has(upper) ? upper : 'other';
}
