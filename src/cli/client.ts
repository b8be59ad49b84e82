import { ApiError, UnreachableError, UsageError } from './errors.js';

/** Long enough for `node sync` over a big inventory, short enough that a wedged server does not hang scripts. */
const DEFAULT_TIMEOUT_MS = 120_000;

export type Query = Readonly<Record<string, string | number | boolean | undefined>>;

export interface RequestOptions {
  readonly query?: Query;
  readonly body?: unknown;
}

/**
 * The Leasehold API over fetch. Paths (and the server's `next` links) are relative to the base URL, so a server
 * published under a path prefix (`https://host/leasehold`) works. Error messages never contain the token.
 */
export class ApiClient {
  private readonly base: URL;

  constructor(
    url: string,
    private readonly token: string | undefined,
    private readonly timeoutMs = DEFAULT_TIMEOUT_MS,
  ) {
    this.base = parseBaseUrl(url);
    // fetch would reject a bad header value with a message that quotes it, i.e. would print the token.
    if (token !== undefined && !/^[\x21-\x7e]+$/.test(token)) {
      throw new UsageError('the token contains spaces or characters that cannot be sent in an HTTP header');
    }
  }

  /** The base URL as shown to people: without any `user:password@` part. */
  get displayUrl(): string {
    return displayUrl(this.base);
  }

  get hasToken(): boolean {
    return this.token !== undefined;
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
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';

    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw unreachable(this.displayUrl, err, this.timeoutMs);
    }

    let text: string;
    try {
      text = await response.text();
    } catch (err) {
      throw unreachable(this.displayUrl, err, this.timeoutMs);
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
    if (response.status === 401 && this.token === undefined) {
      error.message += '; no token was sent: use --token, LEASEHOLD_TOKEN or `leasehold login`';
    }
    throw error;
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
