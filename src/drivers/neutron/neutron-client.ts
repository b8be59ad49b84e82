import type { Clock } from '../../domain/clock.js';
import { BackendUnavailableError, ConflictError, InvalidRequestError, isLeaseholdError } from '../../domain/errors.js';
import type { Logger } from '../../logger.js';
import type { TokenSource } from '../token-source.js';

export interface NeutronClientOptions {
  /** Neutron's endpoint, e.g. `http://127.0.0.1:9696` (a trailing `/v2.0` is accepted and dropped). */
  readonly url: string;
  /** Leasehold's Keystone service token, renewed before it expires; replaced once when Neutron refuses it. */
  readonly tokens: TokenSource;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Per HTTP request (default 30 s). */
  readonly timeoutMs?: number;
}

export interface NeutronAnswer {
  readonly status: number;
  /** Parsed JSON; null for an empty body (204). */
  readonly body: unknown;
}

/** Tries of an idempotent request (GET, PUT, DELETE) on a connection failure or a 503; a POST is sent once. */
const ATTEMPTS = 3;
const BASE_DELAY_MS = 200;

/**
 * HTTP to Neutron's v2.0 API with Leasehold's service token: times out each request, retries idempotent ones on
 * transient failures with backoff on the injected clock, signs in again once on a 401, and reads Neutron's errors
 * (`{"NeutronError": {"type", "message"}}`) into domain errors that keep Neutron's words: 400 → InvalidRequestError,
 * 409 → ConflictError (e.g. "The mac address … is in use"), 404 → a null answer for the caller to read,
 * unreachable or 5xx → BackendUnavailableError. Tokens and bodies are never logged.
 */
export class NeutronClient {
  readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly closing = new AbortController();

  constructor(private readonly options: NeutronClientOptions) {
    this.baseUrl = normalizeUrl(options.url);
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** `GET`: the body, or null on 404. */
  async get(path: string, query?: URLSearchParams): Promise<unknown> {
    const res = await this.request('GET', path + (query && query.size > 0 ? `?${query}` : ''));
    return res.status === 404 ? null : res.body;
  }

  async post(path: string, body: unknown): Promise<unknown> {
    const res = await this.request('POST', path, body);
    if (res.status === 404) throw new InvalidRequestError(`Neutron has no ${path} (404): is the extension enabled?`);
    return res.body;
  }

  /** `PUT`: the body, or null on 404. */
  async put(path: string, body: unknown): Promise<unknown> {
    const res = await this.request('PUT', path, body);
    return res.status === 404 ? null : res.body;
  }

  /** `DELETE`: true when deleted, false when it was not there (404). */
  async delete(path: string): Promise<boolean> {
    return (await this.request('DELETE', path)).status !== 404;
  }

  close(): void {
    this.closing.abort(new BackendUnavailableError('the Neutron client is closed'));
  }

  private async request(method: string, path: string, body?: unknown): Promise<NeutronAnswer> {
    const attempts = method === 'POST' ? 1 : ATTEMPTS;
    let reauthenticated = false;
    for (let attempt = 1; ; attempt++) {
      const token = await this.options.tokens.token();
      const res = await this.once(method, path, token, body);
      if (res.kind === 'response' && res.status === 401 && !reauthenticated) {
        // Keystone revoked or rotated Leasehold's token: once more with a fresh one (not counted as an attempt).
        reauthenticated = true;
        this.options.tokens.invalidate(token);
        attempt--;
        continue;
      }
      const transient = res.kind === 'network' || res.status === 503 || res.status === 502 || res.status === 504;
      if (transient && attempt < attempts) {
        const delay = BASE_DELAY_MS * 2 ** (attempt - 1);
        this.options.logger.debug({ method, path, attempt, delayMs: delay }, 'neutron request will be retried');
        await this.sleep(delay);
        continue;
      }
      if (res.kind === 'network') {
        throw new BackendUnavailableError(`Neutron at ${this.baseUrl} is unreachable (${method} ${path}: ${res.reason})`, { details: { url: this.baseUrl } });
      }
      return this.read(method, path, res);
    }
  }

  private read(method: string, path: string, res: { status: number; text: string }): NeutronAnswer {
    let body: unknown = null;
    if (res.text.trim() !== '') {
      try {
        body = JSON.parse(res.text);
      } catch {
        if (res.status < 400) throw new BackendUnavailableError(`Neutron answered ${method} ${path} with something that is not JSON`);
      }
    }
    if (res.status < 400 || res.status === 404) return { status: res.status, body };
    const message = neutronMessage(body, res.text) ?? `Neutron answered ${res.status} to ${method} ${path}`;
    const details = { neutron_status: res.status, neutron_error: neutronType(body) };
    if (res.status === 401 || res.status === 403) {
      throw new BackendUnavailableError(`Neutron refused Leasehold's service credentials (${res.status} to ${method} ${path}): ${message}`, { details });
    }
    if (res.status === 409) throw new ConflictError(`Neutron: ${message}`, { details });
    if (res.status >= 400 && res.status < 500) throw new InvalidRequestError(`Neutron: ${message}`, { details });
    throw new BackendUnavailableError(`Neutron failed (${res.status}) on ${method} ${path}: ${message}`, { details });
  }

  private async once(
    method: string,
    path: string,
    token: string,
    body: unknown,
  ): Promise<{ kind: 'response'; status: number; text: string } | { kind: 'network'; reason: string }> {
    if (this.closing.signal.aborted) throw this.closing.signal.reason;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const headers: Record<string, string> = { Accept: 'application/json', 'X-Auth-Token': token };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    try {
      const res = await fetch(`${this.baseUrl}/v2.0${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.any([timeout, this.closing.signal]),
        redirect: 'error',
      });
      return { kind: 'response', status: res.status, text: await res.text() };
    } catch (err) {
      if (this.closing.signal.aborted) throw this.closing.signal.reason;
      if (timeout.aborted) return { kind: 'network', reason: `no answer within ${this.timeoutMs} ms` };
      return { kind: 'network', reason: networkReason(err) };
    }
  }

  private async sleep(ms: number): Promise<void> {
    try {
      await this.options.clock.sleep(ms, this.closing.signal);
    } catch (err) {
      throw isLeaseholdError(err) ? err : new BackendUnavailableError('the Neutron client is closed');
    }
  }
}

/** Neutron's words for an error: `{"NeutronError": {"message": …}}`, or the body as text. */
function neutronMessage(body: unknown, text: string): string | null {
  const error = (body as { NeutronError?: { message?: unknown } } | null)?.NeutronError;
  if (typeof error?.message === 'string' && error.message !== '') return error.message;
  const trimmed = text.trim();
  return trimmed === '' ? null : trimmed.slice(0, 500);
}

function neutronType(body: unknown): string | null {
  const type = (body as { NeutronError?: { type?: unknown } } | null)?.NeutronError?.type;
  return typeof type === 'string' ? type : null;
}

function normalizeUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidRequestError(`NEUTRON_URL is not a URL: ${JSON.stringify(value)}`, { details: { variable: 'NEUTRON_URL' } });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidRequestError('NEUTRON_URL must be http(s)', { details: { variable: 'NEUTRON_URL' } });
  url.search = '';
  url.hash = '';
  return url.toString().replace(/\/+$/, '').replace(/\/v2\.0$/, '');
}

/** `fetch failed` hides the reason in `cause` (ECONNREFUSED, ECONNRESET, ...). */
function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return err instanceof Error ? err.message : String(err);
}
