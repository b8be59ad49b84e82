import { KeystoneError, UnreachableError } from '../errors.js';
import { parseTokenBody, type KeystoneTokenInfo } from '../../keystone/keystone-token.js';
import type { AuthRequest } from './auth-request.js';
import { CATALOG_TYPES, type CatalogEndpoint, type CatalogService } from './catalog.js';

/** Keystone answers a token request in 15-25 ms on these machines (openstack-lab notes); 30 s is "not answering". */
const KEYSTONE_TIMEOUT_MS = 30_000;

export interface Named {
  readonly id: string;
  readonly name: string | undefined;
}

/** A token Keystone issued, with what the CLI needs of its body (no secret but the token itself). */
export interface IssuedToken {
  readonly token: string;
  /** RFC 3339, normalised by Date. */
  readonly expiresAt: string;
  readonly user: Named;
  readonly project: Named | undefined;
  readonly system: boolean;
  /** The leasehold and baremetal services only (CATALOG_TYPES). */
  readonly catalog: readonly CatalogService[];
}

export interface IssueOptions {
  /** OS_CACERT / cacert: not applied (Node's fetch takes no CA file), but named when a certificate fails. */
  readonly cacert?: string | undefined;
  readonly timeoutMs?: number;
}

type Json = Readonly<Record<string, unknown>>;

function record(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** What the CLI keeps of a parsed token: the leasehold and baremetal services, endpoints with a URL. */
function catalogOf(info: KeystoneTokenInfo): CatalogService[] {
  return info.catalog
    .filter((service) => CATALOG_TYPES.includes(service.type))
    .map((service) => ({
      type: service.type,
      endpoints: service.endpoints.flatMap((e): CatalogEndpoint[] =>
        e.url && e.interface ? [{ interface: e.interface, region: e.region ?? undefined, url: e.url }] : [],
      ),
    }));
}

/** Keystone's `{"error": {"message"}}`, if any. */
function keystoneMessage(text: string): string | undefined {
  try {
    return str(record(record(JSON.parse(text)).error).message);
  } catch {
    return undefined;
  }
}

/** Every 401 carries this sentence; it adds nothing to "refused". */
const GENERIC_401 = 'The request you have made requires authentication.';

function unreachable(request: AuthRequest, err: unknown, options: IssueOptions, timeoutMs: number): UnreachableError {
  const error = err as Error & { cause?: { code?: string; message?: string } };
  if (error?.name === 'TimeoutError') {
    return new UnreachableError(`Keystone at ${request.authUrl} did not answer within ${timeoutMs / 1000} s`);
  }
  const reason = error?.cause?.message ?? error?.cause?.code ?? error?.message ?? String(err);
  const code = error?.cause?.code ?? '';
  const certificate = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ISSUER/i.test(code) || /certificate/i.test(reason);
  const hint =
    certificate && options.cacert
      ? `; leasehold does not read the CA file ${options.cacert} itself: run it with NODE_EXTRA_CA_CERTS=${options.cacert}`
      : '';
  return new UnreachableError(`cannot reach Keystone at ${request.authUrl}: ${reason}${hint}`);
}

/**
 * `POST /v3/auth/tokens`: the token is the `X-Subject-Token` header, the rest comes from the body. Keystone not
 * answering is exit 3 naming its URL; a refusal is exit 1 naming who was refused, never the secret.
 */
export async function issueToken(request: AuthRequest, options: IssueOptions = {}): Promise<IssuedToken> {
  const timeoutMs = options.timeoutMs ?? KEYSTONE_TIMEOUT_MS;
  let response: Response;
  let text: string;
  try {
    response = await fetch(request.tokensUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(request.body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    text = await response.text();
  } catch (err) {
    throw unreachable(request, err, options, timeoutMs);
  }

  const message = keystoneMessage(text);
  if (response.status === 401) {
    const why = message && message !== GENERIC_401 ? `: ${message}` : '';
    throw new KeystoneError(`Keystone refused the credentials of ${request.identity} (${request.authUrl})${why}`);
  }
  if (response.status === 404) {
    throw new KeystoneError(`${request.authUrl} has no Keystone v3 token API (HTTP 404 for POST /auth/tokens); check OS_AUTH_URL`);
  }
  if (!response.ok) {
    const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
    throw new KeystoneError(
      `Keystone at ${request.authUrl} did not issue a token for ${request.identity}: ${status}${message ? `: ${message}` : ''}`,
    );
  }

  const token = response.headers.get('x-subject-token') ?? '';
  let info: KeystoneTokenInfo | undefined;
  try {
    info = parseTokenBody(JSON.parse(text));
  } catch {
    // Reported below with the missing fields.
  }
  if (token === '' || !info) {
    throw new KeystoneError(
      `${request.authUrl} answered POST /auth/tokens without a token, its expiry or its user; is it a Keystone v3 endpoint?`,
    );
  }
  const named = (n: { readonly id: string; readonly name: string } | null): Named | undefined => (n ? { id: n.id, name: n.name } : undefined);
  return {
    token,
    expiresAt: info.expiresAt.toISOString(),
    user: named(info.user)!,
    project: named(info.project),
    system: info.system,
    catalog: catalogOf(info),
  };
}
