import type { Clock } from '../../domain/clock.js';
import { methodLabel, noMetrics, pathTemplate, type Metrics } from '../../domain/metrics.js';
import { BackendUnavailableError, InvalidRequestError, LeaseholdError, isLeaseholdError } from '../../domain/errors.js';
import type { Logger } from '../../logger.js';
import type { AccessGuard } from '../hardware-driver.js';
import { errorForStatus, faultstring, isNodeLocked } from './ironic-errors.js';
import type { FailureContext } from './ironic-errors.js';
import { VERSION_HEADER, chooseMicroversion, serverVersions } from './microversion.js';
import type { ServerVersions } from './microversion.js';
import type { TokenSource } from '../token-source.js';
import { dropSecrets } from './to-driver-node.js';
import { exchange } from '../http-exchange.js';

export type IronicAuth =
  | { readonly type: 'none' }
  | { readonly type: 'http_basic'; readonly username: string; readonly password: string }
  | { readonly type: 'token'; readonly token: string }
  /** A Keystone token (Leasehold's service token), asked for at each request and replaced once when refused. */
  | { readonly type: 'keystone'; readonly tokens: TokenSource };


export interface RetryPolicy {
  /** Tries per call, the first included (1 = no retry). */
  readonly attempts: number;
  /** First delay; doubled after each attempt, capped at `maxMs`. */
  readonly baseMs: number;
  readonly maxMs: number;
}

export interface IronicClientOptions {
  /** Ironic's API root, e.g. `http://127.0.0.1:6385` (a trailing `/v1` is accepted and dropped). */
  readonly url: string;
  readonly auth: IronicAuth;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Per HTTP request (default 30 s). */
  readonly timeoutMs?: number;
  readonly retry?: RetryPolicy;
  /** Where each request's duration and failure are reported (none: nowhere). */
  readonly metrics?: Metrics;
}

/**
 * Ironic's fixed path words: every other segment (a node's uuid or name, a VIF, a trait, a driver) is an `{id}` in
 * the metrics' path label.
 */
const IRONIC_PATH_WORDS: ReadonlySet<string> = new Set(
  ('v1 nodes ports portgroups drivers chassis allocations deploy_templates conductors volume connectors targets ' +
    'states power provision raid console boot_device boot_mode secure_boot management supported inject_nmi vifs ' +
    'traits bios maintenance validate vendor_passthru indicators history inventory firmware children shards ' +
    'runbooks detail lookup heartbeat events properties').split(' '),
);

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseMs: 200, maxMs: 3_000 };

export interface RequestOptions extends Omit<FailureContext, 'method' | 'path'> {
  readonly query?: Readonly<Record<string, string>>;
  /** Sent as JSON. */
  readonly body?: unknown;
  /** The version document (`GET /`): sent before a microversion is known. */
  readonly unversioned?: boolean;
  /** One attempt, no retries: a health probe must say "unreachable" at once, not after the backoff. */
  readonly once?: boolean;
  /** A call on a caller's behalf: asked before every attempt, and no retry is scheduled past its deadline. */
  readonly guard?: AccessGuard;
}

export interface ForwardOptions {
  /** The raw body the tenant sent. */
  readonly body?: string;
  /** The microversion the tenant asked for (already capped by the caller); null sends none. */
  readonly microversion?: string | null;
  /** As in RequestOptions: the tenant's access, asked before every attempt. */
  readonly guard?: AccessGuard;
}

export interface IronicResponse {
  readonly status: number;
  /** Parsed JSON with driver_info and other secret-bearing keys removed; null for an empty body. */
  readonly body: unknown;
  readonly headers: Headers;
}

type Attempt =
  | { readonly kind: 'response'; readonly status: number; readonly text: string; readonly headers: Headers }
  | { readonly kind: 'network'; readonly reason: string };

/**
 * HTTP to Ironic: negotiates the microversion once (lazily, cached; a failure is retried on the next call),
 * sends it and the credentials with every request, times each request out, retries what is transient (409 node
 * locked, 503, connection errors) with exponential backoff on the injected clock, and turns the rest into domain
 * errors. Credentials and request bodies are never logged; `driver_info` is dropped from every answer.
 */
export class IronicClient {
  readonly baseUrl: string;
  private readonly auth: IronicAuth;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly timeoutMs: number;
  private readonly retry: RetryPolicy;
  private readonly metrics: Metrics;
  private readonly closing = new AbortController();
  private version: Promise<string> | null = null;

  constructor(options: IronicClientOptions) {
    this.baseUrl = normalizeUrl(options.url);
    this.auth = validateAuth(options.auth);
    this.clock = options.clock;
    this.logger = options.logger;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (!Number.isFinite(this.timeoutMs) || this.timeoutMs <= 0) throw new InvalidRequestError('Ironic timeout must be a positive number of milliseconds');
    this.retry = options.retry ?? DEFAULT_RETRY;
    this.metrics = options.metrics ?? noMetrics;
    if (!Number.isInteger(this.retry.attempts) || this.retry.attempts < 1 || this.retry.baseMs < 0 || this.retry.maxMs < 0) {
      throw new InvalidRequestError('Ironic retry policy: attempts must be an integer ≥ 1 and delays ≥ 0');
    }
  }

  /** The negotiated microversion (negotiating on first use). */
  microversion(): Promise<string> {
    if (!this.version) {
      const pending = this.negotiate();
      this.version = pending;
      pending.catch(() => {
        if (this.version === pending) this.version = null;
      });
    }
    return this.version;
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<IronicResponse> {
    this.assertOpen();
    const version = options.unversioned ? null : await this.microversion();
    const url = this.baseUrl + path + query(options.query);
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (version) headers[VERSION_HEADER] = version;
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const ctx: FailureContext = { method, path, nodeId: options.nodeId, transition: options.transition };

    const { result, attempts } = await this.send(method, url, headers, body, path, options.once ? 1 : this.retry.attempts, options.guard);
    if (result.kind === 'response' && result.status < 400) {
      return { status: result.status, body: parseBody(result.text, ctx), headers: result.headers };
    }
    if (result.kind === 'network') {
      throw new BackendUnavailableError(`Ironic at ${this.baseUrl} is unreachable (${method} ${path}: ${result.reason})`, {
        details: { url: this.baseUrl, attempts },
      });
    }
    const error = errorForStatus(result.status, faultstring(result.text), ctx);
    this.logger.debug({ method, path, status: result.status, code: error.code }, 'ironic request failed');
    throw error;
  }

  /**
   * Sends a request on behalf of a tenant (the Ironic-compatible gateway, after its policy check) with Leasehold's
   * credentials, and returns Ironic's answer untouched — status, body text and headers — so the tenant's client
   * sees Ironic's shapes and errors. `microversion` is the one the client asked for (already capped by the caller);
   * null sends none. Transient failures are retried like every other call (each attempt admitted by the tenant's
   * guard); unreachable is BackendUnavailableError.
   */
  async forward(
    method: string,
    pathAndQuery: string,
    options: ForwardOptions = {},
  ): Promise<{ readonly status: number; readonly text: string; readonly headers: Headers }> {
    this.assertOpen();
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (options.microversion) headers[VERSION_HEADER] = options.microversion;
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    const path = pathAndQuery.split('?')[0]!;
    const { result, attempts } = await this.send(method, this.baseUrl + pathAndQuery, headers, options.body, path, this.retry.attempts, options.guard);
    if (result.kind === 'network') {
      throw new BackendUnavailableError(`Ironic at ${this.baseUrl} is unreachable (${method} ${pathAndQuery}: ${result.reason})`, {
        details: { url: this.baseUrl, attempts },
      });
    }
    return { status: result.status, text: result.text, headers: result.headers };
  }

  /**
   * One request with the retries every call gets: 409 node locked, 503 and connection errors, with backoff. A
   * guarded call asks its guard before every attempt (a refusal is the caller's answer, and nothing is sent), and
   * never waits past the guard's deadline: the wait is cut at the end of access, where the guard then refuses.
   */
  private async send(
    method: string,
    url: string,
    headers: Record<string, string>,
    body: string | undefined,
    path: string,
    maxAttempts: number,
    guard: AccessGuard | undefined,
  ): Promise<{ readonly result: Attempt; readonly attempts: number }> {
    let reauthenticated = false;
    for (let attempt = 1; ; attempt++) {
      await guard?.admit();
      const credentials = await this.authHeaders();
      let result = await this.once(method, url, { ...headers, ...credentials }, body, path);
      if (result.kind === 'response' && result.status === 401 && this.auth.type === 'keystone' && !reauthenticated) {
        // Keystone revoked or rotated the service token (or it expired early): once with a fresh one.
        reauthenticated = true;
        this.auth.tokens.invalidate(credentials['X-Auth-Token'] ?? '');
        await guard?.admit();
        result = await this.once(method, url, { ...headers, ...(await this.authHeaders()) }, body, path);
      }
      if (result.kind === 'response' && result.status < 400) return { result, attempts: attempt };
      const fault = result.kind === 'response' ? faultstring(result.text) : null;
      const transient = result.kind === 'network' || result.status === 503 || isNodeLocked(result.status, fault);
      if (!transient || attempt >= maxAttempts) return { result, attempts: attempt };
      let delay = Math.min(this.retry.maxMs, this.retry.baseMs * 2 ** (attempt - 1));
      const deadline = guard?.deadline ?? null;
      if (deadline !== null) delay = Math.min(delay, Math.max(0, deadline.getTime() - this.clock.now().getTime()));
      this.logger.debug(
        { method, path, attempt, delayMs: delay, ...(result.kind === 'response' ? { status: result.status } : { error: result.reason }) },
        'ironic request will be retried',
      );
      await this.sleep(delay);
    }
  }

  /** Aborts every request in flight and every retry wait; later calls fail with BackendUnavailableError. */
  close(): void {
    this.closing.abort(new BackendUnavailableError('the Ironic driver is closed'));
  }

  private async negotiate(): Promise<string> {
    // `GET /` lists the versions; behind a proxy that only forwards `/v1`, `GET /v1` (and its headers) says it too.
    let versions: ServerVersions | null = null;
    let rootError: unknown = null;
    try {
      const root = await this.request('GET', '/', { unversioned: true });
      versions = serverVersions(root.body, root.headers);
    } catch (err) {
      // Unreachable, timed out, closed: `/v1` would fare no better. An HTTP answer (404 from a proxy...): try it.
      const status = err instanceof LeaseholdError ? err.details.ironic_status : undefined;
      if (typeof status !== 'number' || status === 503) throw err;
      rootError = err;
    }
    if (!versions) {
      const v1 = await this.request('GET', '/v1', { unversioned: true }).catch((err: unknown) => {
        throw rootError ?? err;
      });
      versions = serverVersions(v1.body, v1.headers);
    }
    if (!versions) {
      throw new BackendUnavailableError(
        `${this.baseUrl} did not list Ironic API versions (GET / answered without them): is IRONIC_URL Ironic's API root?`,
        { details: { url: this.baseUrl } },
      );
    }
    const chosen = chooseMicroversion(versions, this.baseUrl);
    this.logger.info({ url: this.baseUrl, microversion: chosen }, 'ironic API microversion negotiated');
    return chosen;
  }

  /** One attempt, timed and reported to the metrics (by path template: no node ids in labels). */
  private async once(method: string, url: string, headers: Record<string, string>, body: string | undefined, path: string): Promise<Attempt> {
    const started = performance.now();
    let error: string | null = 'timeout';
    try {
      const attempt = await this.attempt(method, url, headers, body, path);
      error = attempt.kind === 'network' ? 'network' : attempt.status >= 400 ? String(attempt.status) : null;
      return attempt;
    } finally {
      // Closing the driver is not Ironic failing: not reported.
      if (!this.closing.signal.aborted) {
        this.metrics.backendRequest({ backend: 'ironic', method: methodLabel(method), path: pathTemplate(path, IRONIC_PATH_WORDS), seconds: (performance.now() - started) / 1000, error });
      }
    }
  }

  private async attempt(method: string, url: string, headers: Record<string, string>, body: string | undefined, path: string): Promise<Attempt> {
    this.assertOpen();
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = AbortSignal.any([timeout, this.closing.signal]);
    try {
      const res = await exchange(url, { method, headers, body, signal });
      return { kind: 'response', status: res.status, text: res.text, headers: res.headers };
    } catch (err) {
      if (this.closing.signal.aborted) throw this.closing.signal.reason;
      if (timeout.aborted) {
        throw new BackendUnavailableError(`Ironic did not answer ${method} ${path} within ${this.timeoutMs} ms`, {
          details: { url: this.baseUrl, timeoutMs: this.timeoutMs },
        });
      }
      return { kind: 'network', reason: networkReason(err) };
    }
  }

  private async sleep(ms: number): Promise<void> {
    try {
      await this.clock.sleep(ms, this.closing.signal);
    } catch (err) {
      throw isLeaseholdError(err) ? err : new BackendUnavailableError('the Ironic driver is closed');
    }
  }

  private assertOpen(): void {
    if (this.closing.signal.aborted) throw new BackendUnavailableError('the Ironic driver is closed');
  }

  private async authHeaders(): Promise<Record<string, string>> {
    switch (this.auth.type) {
      case 'none':
        return {};
      case 'http_basic':
        return { Authorization: `Basic ${Buffer.from(`${this.auth.username}:${this.auth.password}`).toString('base64')}` };
      case 'token':
        return { 'X-Auth-Token': this.auth.token };
      case 'keystone':
        return { 'X-Auth-Token': await this.auth.tokens.token() };
    }
  }
}

function normalizeUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidRequestError(`Ironic URL is not a URL: ${JSON.stringify(value)}`, { details: { variable: 'IRONIC_URL' } });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidRequestError('Ironic URL must be http(s)', { details: { variable: 'IRONIC_URL' } });
  }
  if (url.username || url.password) {
    throw new InvalidRequestError('Ironic URL must not carry credentials: use IRONIC_AUTH_TYPE=http_basic', { details: { variable: 'IRONIC_URL' } });
  }
  url.search = '';
  url.hash = '';
  return url.toString().replace(/\/+$/, '').replace(/\/v1$/, '');
}

function validateAuth(auth: IronicAuth): IronicAuth {
  const fail = (message: string) => new InvalidRequestError(message, { details: { variable: 'IRONIC_AUTH_TYPE' } });
  switch (auth?.type) {
    case 'none':
      return auth;
    case 'http_basic':
      if (!auth.username || auth.username.includes(':')) throw fail('Ironic http_basic auth needs a username without ":"');
      if (typeof auth.password !== 'string' || auth.password === '') throw fail('Ironic http_basic auth needs a password');
      return auth;
    case 'token':
      if (!auth.token) throw fail('Ironic token auth needs a token');
      return auth;
    case 'keystone':
      if (!auth.tokens) throw fail('Ironic keystone auth needs a Keystone session');
      return auth;
    default:
      throw fail('Ironic auth type must be none, http_basic, token or keystone');
  }
}

function query(params: Readonly<Record<string, string>> | undefined): string {
  if (!params || Object.keys(params).length === 0) return '';
  return `?${new URLSearchParams(params).toString()}`;
}

function parseBody(text: string, ctx: FailureContext): unknown {
  if (text.trim() === '') return null;
  try {
    return dropSecrets(JSON.parse(text));
  } catch {
    throw new BackendUnavailableError(`Ironic answered ${ctx.method} ${ctx.path} with something that is not JSON`);
  }
}

/** `fetch failed` hides the reason in `cause` (ECONNREFUSED, ECONNRESET, ENOTFOUND, ...). */
function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  if (typeof cause?.message === 'string') return cause.message;
  return err instanceof Error ? err.message : String(err);
}
