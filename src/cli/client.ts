import { ApiError, UnreachableError, UsageError } from './errors.js';

/** Long enough for `node sync` over a big inventory, short enough that a wedged server does not hang scripts. */
const DEFAULT_TIMEOUT_MS = 120_000;

export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface RequestOptions {
  readonly query?: Query;
  readonly body?: unknown;
}

/**
 * Where the token of each request comes from when it is not a fixed Leasehold token: a Keystone session, which
 * may renew it after a 401.
 */
export interface Credential {
  /** The header the token travels in (`x-auth-token` for Keystone tokens, as OpenStack clients send them). */
  readonly header: 'authorization' | 'x-auth-token';
  token(): Promise<string>;
  /** After a 401: forget the token and get another. A fixed token has none. */
  renew?(): Promise<string>;
  /** Added to the message of a 401 that renewing did not cure. */
  readonly refusedHint?: string;
}

/** A fixed Leasehold token sent as `Authorization: Bearer`: nothing to renew. */
function fixedToken(token: string): Credential {
  return { header: 'authorization', token: async () => token };
}

/** fetch would reject a bad header value with a message that quotes it, i.e. would print the token. */
function checkHeaderValue(token: string): string {
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw new UsageError('the token contains spaces or characters that cannot be sent in an HTTP header');
  }
  return token;
}

export interface ClientOptions {
  readonly timeoutMs?: number;
}

/**
 * The Leasehold API over fetch. Paths (and the server's `next` links) are relative to the base URL, so a server
 * published under a path prefix (`https://host/leasehold`) works. Error messages never contain the token. With a
 * renewable credential (Keystone), a 401 gets one new token and one retry: a 401 means the request was not done.
 */
export class ApiClient {
  private readonly base: URL;
  private readonly credential: Credential | undefined;
  private readonly timeoutMs: number;

  constructor(url: string, token: string | Credential | undefined, options: ClientOptions = {}) {
    this.base = parseBaseUrl(url);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.credential = typeof token === 'string' ? fixedToken(checkHeaderValue(token)) : token;
  }

  /** The base URL as shown to people: without any `user:password@` part. */
  get displayUrl(): string {
    return displayUrl(this.base);
  }

  get hasToken(): boolean {
    return this.credential !== undefined;
  }

  get<T>(path: string, query?: Query): Promise<T> {
    return this.request<T>('GET', path, { query });
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.request<T>('POST', path, { body });
  }

  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, { body });
  }

  delete(path: string): Promise<void> {
    return this.request<void>('DELETE', path);
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const url = this.resolve(path, options.query);
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const credential = this.credential;
    let token = credential ? checkHeaderValue(await credential.token()) : undefined;
    let { response, text } = await this.send(method, url, body, token);
    if (response.status === 401 && credential?.renew) {
      token = checkHeaderValue(await credential.renew());
      ({ response, text } = await this.send(method, url, body, token));
    }

    if (response.ok) {
      if (response.status === 204 || text === '') return undefined as T;
      try {
        return JSON.parse(text) as T;
      } catch {
        throw new ApiError(response.status, 'bad_response', `${this.displayUrl} answered ${method} ${path} with something that is not JSON; is it a Leasehold server?`);
      }
    }
    const error = errorFrom(response, text, this.displayUrl);
    if (response.status === 401 && credential === undefined) {
      error.message +=
        '; no token was sent: use --token, LEASEHOLD_TOKEN or `leasehold login` (or Keystone credentials: --os-cloud, OS_CLOUD or OS_AUTH_URL and the other OS_* variables)';
    } else if (response.status === 401 && credential?.refusedHint) {
      error.message += `; ${credential.refusedHint}`;
    }
    throw error;
  }

  private async send(
    method: string,
    url: URL,
    body: string | undefined,
    token: string | undefined,
  ): Promise<{ response: Response; text: string }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (token !== undefined && this.credential) {
      if (this.credential.header === 'authorization') headers.authorization = `Bearer ${token}`;
      else headers['x-auth-token'] = token;
    }
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      const response = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(this.timeoutMs) });
      return { response, text: await response.text() };
    } catch (err) {
      throw unreachable(this.displayUrl, err, this.timeoutMs);
    }
  }

  private resolve(path: string, query: Query | undefined): URL {
    const basePath = this.base.pathname.replace(/\/+$/, '');
    const url = new URL(this.base.href);
    const [pathname = '', search = ''] = path.split('?', 2);
    url.pathname = basePath + (pathname.startsWith('/') ? pathname : `/${pathname}`);
    url.search = search;
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url;
  }
}

function parseBaseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`the server URL ${JSON.stringify(text)} is not a URL; use e.g. ${'http://127.0.0.1:8080'}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`the server URL ${displayUrl(url)} must start with http:// or https://`);
  }
  if (url.username || url.password) {
    // fetch refuses such URLs with a message that quotes the password; Leasehold authenticates with tokens.
    throw new UsageError(`the server URL ${displayUrl(url)} must not contain a user name or password; use a token`);
  }
  url.search = '';
  url.hash = '';
  return url;
}

function displayUrl(url: URL): string {
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${url.host}${path}`;
}

/** The server's `{"error": {...}}` when it sent one; otherwise a message naming the HTTP status. */
function errorFrom(response: Response, text: string, base: string): ApiError {
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: unknown } };
    const error = body.error;
    if (error && typeof error.message === 'string') {
      const code = typeof error.code === 'string' ? error.code : `http_${response.status}`;
      const details =
        error.details && typeof error.details === 'object' ? (error.details as Record<string, unknown>) : {};
      return new ApiError(response.status, code, error.message, details);
    }
  } catch {
    // Not JSON: a proxy's error page or not a Leasehold server at all; fall through to a generic message.
  }
  const reason = response.statusText ? ` ${response.statusText}` : '';
  return new ApiError(
    response.status,
    `http_${response.status}`,
    `${base} answered HTTP ${response.status}${reason} without a Leasehold error body`,
  );
}

function unreachable(base: string, err: unknown, timeoutMs: number): UnreachableError {
  const error = err as Error & { cause?: { code?: string; message?: string } };
  if (error?.name === 'TimeoutError') {
    return new UnreachableError(`the Leasehold server at ${base} did not answer within ${timeoutMs / 1000} s`);
  }
  // fetch reports "fetch failed" and keeps the useful part (ECONNREFUSED, ENOTFOUND, certificate) in `cause`.
  const reason = error?.cause?.message ?? error?.cause?.code ?? error?.message ?? String(err);
  return new UnreachableError(`cannot reach the Leasehold server at ${base}: ${reason}`);
}
