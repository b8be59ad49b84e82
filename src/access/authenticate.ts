import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import type { Clock } from '../domain/clock.js';
import { UnauthenticatedError } from '../domain/errors.js';
import type { Principal } from '../domain/identity.js';
import { LocalIdentity } from '../identity/local-identity.js';
import type { NodeWithLease, Store } from '../store/store.js';
import { AuthLimiter } from './auth-limiter.js';
import type { EntryDeps } from './entry-deps.js';

/** The token from `Authorization: Bearer <t>` or `X-Auth-Token: <t>` (what OpenStack clients send). */
export function tokenFromHeaders(authorization: string | undefined, xAuthToken: string | undefined): string | null {
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  return bearer ?? (xAuthToken?.trim() || null);
}

// One limiter per store, that is per API of a process: the REST API, the gateway and the console proxy are built
// from one store and so share it (a client refused at one is refused at all three).
const limiters = new WeakMap<Store, AuthLimiter>();

/** The bad-token limiter of the API built on `deps.store`. */
export function authLimiter(deps: { readonly store: Store; readonly clock: Clock }): AuthLimiter {
  let limiter = limiters.get(deps.store);
  if (!limiter) limiters.set(deps.store, (limiter = new AuthLimiter(deps.clock)));
  return limiter;
}

/** The remote address of the connection a request came on (@hono/node-server's bindings); null in-process. */
export function clientAddress(c: Context): string | null {
  const env = c.env as { incoming?: IncomingMessage; server?: { incoming?: IncomingMessage } } | undefined;
  return (env?.server?.incoming ?? env?.incoming)?.socket?.remoteAddress ?? null;
}

/**
 * The principal a token stands for, at this instant (the identity backend: one indexed lookup, or a cached Keystone
 * validation): UnauthenticatedError without a token or
 * with one that is unknown, revoked or expired; TooManyRequestsError, before any lookup, for a client that sent
 * too many unknown tokens lately (auth-limiter.ts).
 */
export async function authenticateToken(
  deps: Pick<EntryDeps, 'store' | 'clock' | 'identity'>,
  token: string | null,
  client: string | null,
): Promise<Principal> {
  if (!token) throw new UnauthenticatedError();
  const limiter = authLimiter(deps);
  const refusal = limiter.refusal(client);
  if (refusal) throw refusal;
  const principal = await deps.identity.authenticate(token);
  if (principal) return principal;
  limiter.failed(client);
  throw new UnauthenticatedError('the token is unknown, revoked or expired');
}

/**
 * A gateway node request's caller and node (`idOrName`, with its current lease at this instant): the same checks as
 * authenticateToken (limiter first, the same errors), then the same read as nodeForCaller makes. Under local
 * identity both are one query (Store.tokenWithNode), so the node is read only once the token is known and never
 * beside it: the caller's project is the one its token row names in that same snapshot. Under Keystone the token
 * is validated (cached) first, then the node read.
 */
export async function authenticateWithNode(
  deps: Pick<EntryDeps, 'store' | 'clock' | 'identity'>,
  token: string | null,
  client: string | null,
  idOrName: string,
): Promise<{ readonly principal: Principal; readonly found: NodeWithLease | null }> {
  if (!(deps.identity instanceof LocalIdentity)) {
    const principal = await authenticateToken(deps, token, client);
    return { principal, found: await deps.store.nodeWithLease(idOrName, deps.clock.now()) };
  }
  if (!token) throw new UnauthenticatedError();
  const limiter = authLimiter(deps);
  const refusal = limiter.refusal(client);
  if (refusal) throw refusal;
  const answer = await deps.identity.authenticateWithNode(token, idOrName);
  if (answer) return answer;
  limiter.failed(client);
  throw new UnauthenticatedError('the token is unknown, revoked or expired');
}
