import { createHash, timingSafeEqual } from 'node:crypto';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { MetricsAccess } from '../access/entry-deps.js';
import { NotFoundError, UnauthenticatedError } from '../domain/errors.js';
import { methodLabel, type Metrics } from '../domain/metrics.js';
import { errorResponse } from './error-response.js';

/**
 * `GET /metrics` in Prometheus's text format. The rule, one for both ports: with LEASEHOLD_METRICS_TOKEN set a
 * scrape must send `Authorization: Bearer <token>` (Prometheus's `authorization: {credentials_file: ...}`), else
 * 401; unset, whoever reaches the port may read it (counts, states and timings; no ids, names or secrets). With
 * LEASEHOLD_METRICS_PORT set only that port serves it: the API port answers 404 saying where it is.
 */
export function metricsRoutes(access: MetricsAccess | undefined, on: 'api' | 'metrics'): Hono {
  const app = new Hono();
  app.get('/metrics', async (c) => {
    if (!access || (on === 'api' && access.separatePort !== null)) {
      const where = access?.separatePort != null ? `metrics are served on port ${access.separatePort} (LEASEHOLD_METRICS_PORT)` : 'no metrics here';
      return refuse(c, new NotFoundError('route', 'GET /metrics'), where);
    }
    if (access.token !== null && !bearerMatches(c.req.header('authorization'), access.token)) {
      c.header('www-authenticate', 'Bearer realm="leasehold-metrics"');
      return refuse(c, new UnauthenticatedError('/metrics needs Authorization: Bearer <LEASEHOLD_METRICS_TOKEN>'));
    }
    const text = await access.endpoint.render();
    return c.body(text, 200, { 'content-type': access.endpoint.contentType, 'cache-control': 'no-store' });
  });
  return app;
}

/** The one error shape; `message` says where the metrics are instead of "not found". */
function refuse(c: Context, error: NotFoundError | UnauthenticatedError, message?: string): Response {
  const { status, body } = errorResponse(error);
  return c.json(message ? { error: { ...body.error, message } } : body, status as 401 | 404);
}

/** Compared as hashes in constant time: neither the token nor its length leaks through timing. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (!match) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(match[1]!), digest(token));
}

/**
 * Counts every request by the route *template* Hono matched (`/v1/leases/:id`), never the raw path: the first
 * matched handler's path (a middleware that answered first, e.g. a 401, still counts under the route asked for);
 * with no handler (only middleware matched) the answering middleware's pattern, and `unmatched` for a 404 there.
 */
export function requestMetrics(metrics: Metrics): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      metrics.httpRequest({ method: methodLabel(c.req.method), route: routeTemplate(c), status: c.res.status, seconds: (performance.now() - started) / 1000 });
    }
  };
}

function routeTemplate(c: Context): string {
  let routes: ReturnType<typeof matchedRoutes>;
  try {
    routes = matchedRoutes(c);
  } catch {
    // No routing result (a request Hono refused before routing): counting must never break the answer.
    return 'unmatched';
  }
  // Middleware takes (c, next); handlers take (c) — how Hono's own route helper tells them apart.
  const handler = routes.find((r) => r.handler.length < 2 && r.method !== 'ALL') ?? routes.find((r) => r.handler.length < 2);
  if (handler) return handler.path;
  if (c.res.status === 404) return 'unmatched';
  return routes[c.req.routeIndex]?.path ?? 'unmatched';
}
