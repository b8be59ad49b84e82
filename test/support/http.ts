/**
 * The one HTTP helper of the tests and the benchmark: a JSON call with a token, answered as `{status, body,
 * headers}` with the body parsed when it is JSON (kept as text otherwise). `send` is `app.request` for an
 * in-process app, or `fetch` against a listening server.
 */
export interface CallOptions {
  /** Sent as `Authorization: Bearer`; null sends none. */
  readonly token?: string | null;
  /** JSON-encoded, with `content-type: application/json`. */
  readonly body?: unknown;
  /** Sent as it is (malformed JSON, a huge body), with `content-type: application/json` unless `headers` say. */
  readonly rawBody?: string;
  readonly headers?: Record<string, string>;
}

export interface Reply<T = any> {
  readonly status: number;
  readonly body: T;
  readonly headers: Headers;
}

export type Send = (path: string, init: RequestInit) => Promise<Response> | Response;

export async function callJson<T = any>(send: Send, method: string, path: string, options: CallOptions = {}): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token != null) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const res = await send(path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: keep the text */
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/** `send` for a server listening at `baseUrl`. */
export const overHttp =
  (baseUrl: () => string): Send =>
  (path, init) =>
    fetch(baseUrl() + path, init);

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` until it is true; throws naming `what` (a function: what it shows at that moment) after `timeoutMs`. */
export async function until(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string | (() => string),
  intervalMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${typeof what === 'string' ? what : what()}`);
    await sleep(intervalMs);
  }
}

export type ApiResponse<T = any> = Reply<T>;

/** A caller of Leasehold's API with one token. The URL is read at each call: it follows server restarts. */
export class Api {
  constructor(
    private readonly baseUrl: () => string,
    readonly token: string,
    readonly name: string,
  ) {}

  get url(): string {
    return this.baseUrl();
  }

  /** LEASEHOLD_URL and LEASEHOLD_TOKEN, for the CLI (test/support/processes.ts cli/cliJson). */
  get cliEnv(): Record<string, string> {
    return { LEASEHOLD_URL: this.baseUrl(), LEASEHOLD_TOKEN: this.token };
  }

  async call<T = any>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
    return callJson<T>(overHttp(this.baseUrl), method, path, { token: this.token, body });
  }

  /** call(), but anything other than a 2xx throws with the server's answer. */
  async ok<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.call<T>(method, path, body);
    if (res.status < 200 || res.status >= 300) {
      throw new Error(`${this.name}: ${method} ${path} → ${res.status}: ${JSON.stringify(res.body)}`);
    }
    return res.body;
  }

  /** Every event matching the query string (all pages), oldest first. */
  async events(query: Record<string, string>): Promise<any[]> {
    const out: any[] = [];
    let path: string | null = `/v1/events?${new URLSearchParams({ limit: '1000', ...query }).toString()}`;
    while (path) {
      const page: { events: any[]; next: string | null } = await this.ok('GET', path);
      out.push(...page.events);
      path = page.next;
    }
    return out.reverse();
  }
}
