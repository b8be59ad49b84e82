import { BackendUnavailableError, InvalidRequestError, UnauthenticatedError } from '../domain/errors.js';
import type { KeystoneCredentials } from '../domain/identity-backend.js';
import { methodLabel, noMetrics, type Metrics } from '../domain/metrics.js';
import { parseTokenBody, type KeystoneTokenInfo } from './keystone-token.js';

export type { KeystoneCredentials } from '../domain/identity-backend.js';

export interface IssuedToken {
  /** The token (Keystone's `X-Subject-Token`): a secret, never logged. */
  readonly token: string;
  readonly info: KeystoneTokenInfo;
}

/** Keystone said no to the credentials or the token presented with the request (401). */
export class KeystoneRefusedError extends UnauthenticatedError {}

const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * Keystone's v3 identity API, the parts Leasehold uses: issue a token for credentials, and validate a user's token
 * with a service token. Unreachable or answering 5xx is BackendUnavailableError (a caller's 503, never a 401);
 * secrets never appear in errors.
 */
export class KeystoneClient {
  /** The v3 root, e.g. `http://keystone.example:5000/v3`. */
  readonly url: string;
  private readonly timeoutMs: number;
  private readonly metrics: Metrics;

  constructor(options: { readonly url: string; readonly timeoutMs?: number; readonly metrics?: Metrics }) {
    this.url = v3Root(options.url);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.metrics = options.metrics ?? noMetrics;
  }

  /** `POST /v3/auth/tokens`: the credentials' token with what it says. KeystoneRefusedError when refused. */
  issueToken(credentials: KeystoneCredentials): Promise<IssuedToken> {
    return this.issueWith(authBody(credentials), describe(credentials));
  }

  /**
   * `POST /v3/auth/tokens` with an `auth` body as a user's client would send it (password, application credential,
   * token; a scope); `who` names the credentials in a refusal (never the secret).
   */
  async issueWith(body: unknown, who: string): Promise<IssuedToken> {
    const res = await this.fetch('/auth/tokens', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status === 401 || res.status === 403 || res.status === 404) {
      throw new KeystoneRefusedError(`Keystone at ${this.url} refused the credentials of ${who} (${res.status})`);
    }
    if (res.status !== 201 && res.status !== 200) throw this.unavailable(`answered ${res.status} to a token request`);
    const token = res.headers.get('x-subject-token');
    if (!token) throw this.unavailable('answered without X-Subject-Token');
    return { token, info: this.parse(await res.json().catch(() => null)) };
  }

  /**
   * `GET /v3/auth/tokens`: what `subject` says, asked with `serviceToken`; null when Keystone does not know it, or
   * it expired or was revoked (404). KeystoneRefusedError when the service token itself is refused (401).
   */
  async validateToken(serviceToken: string, subject: string): Promise<KeystoneTokenInfo | null> {
    const res = await this.fetch('/auth/tokens', { headers: { 'x-auth-token': serviceToken, 'x-subject-token': subject } });
    if (res.status === 404) return null;
    if (res.status === 401 || res.status === 403) throw new KeystoneRefusedError(`Keystone at ${this.url} refused Leasehold's own token (${res.status})`);
    if (res.status !== 200) throw this.unavailable(`answered ${res.status} to a token validation`);
    return this.parse(await res.json().catch(() => null));
  }

  /**
   * `DELETE /v3/auth/tokens` with the token as its own subject (Keystone lets a token's holder revoke it): signing
   * out. A token Keystone no longer knows (404) is as good as revoked.
   */
  async revokeToken(userToken: string): Promise<void> {
    const res = await this.fetch('/auth/tokens', { method: 'DELETE', headers: { 'x-auth-token': userToken, 'x-subject-token': userToken } });
    if (res.status === 204 || res.status === 200 || res.status === 404) return;
    if (res.status === 401 || res.status === 403) throw new KeystoneRefusedError(`Keystone at ${this.url} refused to revoke the token (${res.status})`);
    throw this.unavailable(`answered ${res.status} to a token revocation`);
  }

  /** `GET /v3/auth/projects`: the projects a user's token may be scoped to (for a project switcher). */
  async userProjects(userToken: string): Promise<readonly { readonly id: string; readonly name: string; readonly domainId: string | null }[]> {
    const res = await this.fetch('/auth/projects', { headers: { 'x-auth-token': userToken } });
    if (res.status === 401 || res.status === 404) throw new KeystoneRefusedError(`Keystone at ${this.url} refused the token (${res.status})`);
    if (res.status !== 200) throw this.unavailable(`answered ${res.status} to a project listing`);
    const body = (await res.json().catch(() => ({}))) as { projects?: Array<{ id?: unknown; name?: unknown; domain_id?: unknown }> };
    return (body.projects ?? [])
      .filter((p) => typeof p.id === 'string')
      .map((p) => ({ id: p.id as string, name: typeof p.name === 'string' ? p.name : (p.id as string), domainId: typeof p.domain_id === 'string' ? p.domain_id : null }));
  }

  /** `GET /v3`: Keystone answers at all (readiness). */
  async ping(): Promise<void> {
    const res = await this.fetch('', {});
    if (res.status !== 200) throw this.unavailable(`answered ${res.status} to GET /v3`);
  }

  /** Every call, timed and reported: the paths are Leasehold's own fixed ones (no ids), `/v3` + path. */
  private async fetch(path: string, init: RequestInit): Promise<Response> {
    const started = performance.now();
    const report = (error: string | null) =>
      this.metrics.backendRequest({ backend: 'keystone', method: methodLabel(init.method ?? 'GET'), path: `/v3${path}`, seconds: (performance.now() - started) / 1000, error });
    try {
      const res = await fetch(this.url + path, { ...init, signal: AbortSignal.timeout(this.timeoutMs) });
      report(res.status >= 400 ? String(res.status) : null);
      return res;
    } catch (err) {
      const timedOut = err instanceof Error && err.name === 'TimeoutError';
      report(timedOut ? 'timeout' : 'network');
      const reason = timedOut ? `no answer within ${this.timeoutMs} ms` : networkReason(err);
      throw this.unavailable(`is unreachable (${reason})`);
    }
  }

  private parse(body: unknown): KeystoneTokenInfo {
    try {
      return parseTokenBody(body);
    } catch (err) {
      throw this.unavailable(`answered something that is not a token (${(err as Error).message})`);
    }
  }

  private unavailable(what: string): BackendUnavailableError {
    return new BackendUnavailableError(`Keystone at ${this.url} ${what}`, { details: { url: this.url } });
  }
}

/** The v3 root of a Keystone URL given with or without `/v3` (a trailing slash dropped). */
export function v3Root(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidRequestError(`KEYSTONE_URL is not a URL: ${JSON.stringify(value)}`, { details: { variable: 'KEYSTONE_URL' } });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidRequestError('KEYSTONE_URL must be http(s)', { details: { variable: 'KEYSTONE_URL' } });
  }
  const base = url.toString().replace(/\/+$/, '');
  return /\/v3$/.test(base) ? base : `${base}/v3`;
}

function authBody(c: KeystoneCredentials): unknown {
  if (c.type === 'application_credential') {
    return { auth: { identity: { methods: ['application_credential'], application_credential: { id: c.id, secret: c.secret } } } };
  }
  return {
    auth: {
      identity: { methods: ['password'], password: { user: { name: c.username, domain: { name: c.userDomainName }, password: c.password } } },
      scope: { project: { name: c.projectName, domain: { name: c.projectDomainName } } },
    },
  };
}

/** Who the credentials are, for messages (never the secret). */
export function describe(c: KeystoneCredentials): string {
  return c.type === 'application_credential' ? `application credential ${c.id}` : `${c.username}@${c.projectName}`;
}

function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}
