import type { MiddlewareHandler } from 'hono';
import { authenticateToken, clientAddress, tokenFromHeaders } from '../access/authenticate.js';
import type { EntryDeps } from '../access/entry-deps.js';
import { TooManyRequestsError } from '../domain/errors.js';
import type { AppEnv } from './context.js';

/**
 * Resolves the caller from its token on every request (one indexed lookup), so a revoked or expired token
 * stops working at once on every replica.
 */
export function requireAuth(deps: Pick<EntryDeps, 'store' | 'clock' | 'identity'>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = tokenFromHeaders(c.req.header('authorization'), c.req.header('x-auth-token'));
    try {
      c.set('principal', await authenticateToken(deps, token, clientAddress(c)));
    } catch (err) {
      // The one error shape is written by the app's error handler; the header it cannot know is set here.
      if (err instanceof TooManyRequestsError) c.header('retry-after', String(err.retryAfterSeconds));
      throw err;
    }
    c.set('log', c.get('log').child({ user: c.get('principal').userName }));
    await next();
  };
}
