import type { MiddlewareHandler } from 'hono';
import { UnauthenticatedError } from '../domain/errors.js';
import { hashToken } from '../domain/tokens.js';
import type { ApiDeps, AppEnv } from './context.js';

/** The token from `Authorization: Bearer <t>` or `X-Auth-Token: <t>` (what OpenStack clients send). */
export function tokenFromHeaders(authorization: string | undefined, xAuthToken: string | undefined): string | null {
  const bearer = authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  return bearer ?? (xAuthToken?.trim() || null);
}

/**
 * Resolves the caller from its token on every request (one indexed lookup), so a revoked or expired token
 * stops working at once on every replica.
 */
export function requireAuth(deps: Pick<ApiDeps, 'store' | 'clock'>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = tokenFromHeaders(c.req.header('authorization'), c.req.header('x-auth-token'));
    if (!token) throw new UnauthenticatedError();
    const principal = await deps.store.authenticate(hashToken(token), deps.clock.now());
    if (!principal) throw new UnauthenticatedError('the token is unknown, revoked or expired');
    c.set('principal', principal);
    c.set('log', c.get('log').child({ user: principal.userName }));
    await next();
  };
}
