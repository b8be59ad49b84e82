import { OpenAPIHono } from '@hono/zod-openapi';
import { bodyLimit } from 'hono/body-limit';
import { requestId } from 'hono/request-id';
import { NotFoundError, PayloadTooLargeError } from '../domain/errors.js';
import { requireAuth } from './auth.js';
import { createRouter, type ApiDeps, type AppEnv } from './context.js';
import { docsPage } from './docs-page.js';
import { webUi } from './web-ui.js';
import { metricsRoutes, requestMetrics } from './metrics-route.js';
import { toLeaseholdError } from '../access/http-errors.js';
import { errorResponse } from './error-response.js';
import { gatewayApp } from '../gateway/gateway-app.js';
import { ironicErrorFor } from '../gateway/ironic-shapes.js';
import { allocationRoutes } from './routes/allocations.js';
import { availabilityRoutes } from './routes/availability.js';
import { usageRoutes } from './routes/usage.js';
import { reclaimRoutes } from './routes/reclaim.js';
import { leaseExtensionRoutes } from './routes/lease-extension.js';
import { consoleRoutes } from './routes/console.js';
import { eventRoutes } from './routes/events.js';
import { healthRoutes } from './routes/health.js';
import { leaseRoutes } from './routes/leases.js';
import { networkRoutes } from './routes/networks.js';
import { nodeActionRoutes } from './routes/node-actions.js';
import { offerRoutes } from './routes/offers.js';
import { nodeRoutes } from './routes/nodes.js';
import { projectRoutes } from './routes/projects.js';
import { signInRoutes } from './routes/sign-in.js';
import { tokenRoutes } from './routes/tokens.js';
import { userRoutes } from './routes/users.js';

export const API_VERSION = '0.1.0';
const MAX_BODY_BYTES = 1024 * 1024;

/** The HTTP API: routes, validation, auth and the one error mapping. No listening socket (see server/). */
export function createApp(deps: ApiDeps): OpenAPIHono<AppEnv> {
  const app = createRouter();

  app.use(requestId());
  if (deps.metrics) app.use(requestMetrics(deps.metrics));
  app.use(async (c, next) => {
    const started = performance.now();
    c.set('log', deps.logger.child({ req_id: c.get('requestId') }));
    await next();
    const status = c.res.status;
    c.get('log')[status >= 500 ? 'error' : 'info'](
      { method: c.req.method, path: c.req.path, status, ms: Math.round(performance.now() - started) },
      'request',
    );
  });
  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new PayloadTooLargeError(`request body larger than ${MAX_BODY_BYTES} bytes`, { details: { max_bytes: MAX_BODY_BYTES } });
    },
  });
  // No route reads the body of a GET or HEAD, and asking whether one has a body makes @hono/node-server build a whole
  // Web Request for it (headers, URL, abort signal): ≈ 0.1 ms of every read, profiled on the gateway's node GET.
  app.use((c, next) => (c.req.method === 'GET' || c.req.method === 'HEAD' ? next() : limitBody(c, next)));

  app.onError((err, c) => {
    // Refused before the gateway saw it (a body over the limit): still in Ironic's error format for Ironic's clients.
    if (c.req.path === '/baremetal' || c.req.path.startsWith('/baremetal/')) {
      const { status, body } = ironicErrorFor(err);
      return c.body(body, status as 400, { 'content-type': 'application/json' });
    }
    const error = toLeaseholdError(err);
    const { status, body } = errorResponse(error);
    const log = c.get('log') ?? deps.logger;
    if (status >= 500 && error.retryable) {
      // A backend away (the database restarting, Ironic down) is an expected fault, not a bug: one line, no
      // stack, and the client is told when to try again.
      log.warn({ code: error.code, error: error.message }, 'request failed: backend unavailable');
      c.header('retry-after', '1');
    } else if (status >= 500) log.error({ err }, 'request failed');
    return c.json(body, status as 400);
  });
  app.notFound((c) => {
    const { status, body } = errorResponse(new NotFoundError('route', `${c.req.method} ${c.req.path}`));
    return c.json(body, status as 404);
  });

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'Authorization: Bearer <token>',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'authToken', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Auth-Token',
    description: 'The header OpenStack clients send',
  });

  app.route('/', healthRoutes(deps));
  // Outside /v1: Prometheus scrapes with LEASEHOLD_METRICS_TOKEN (or nothing), not a user's token.
  app.route('/', metricsRoutes(deps.metricsAccess, 'api'));
  // Before the auth middleware: signing in is how one gets a token (and /v1/auth/projects checks its own).
  app.route('/', signInRoutes(deps));
  app.use('/v1/*', requireAuth(deps));
  app.route('/', projectRoutes(deps));
  app.route('/', userRoutes(deps));
  app.route('/', tokenRoutes(deps));
  app.route('/', nodeRoutes(deps));
  app.route('/', nodeActionRoutes(deps));
  app.route('/', consoleRoutes(deps));
  app.route('/', networkRoutes(deps));
  app.route('/', offerRoutes(deps));
  app.route('/', leaseRoutes(deps));
  app.route('/', allocationRoutes(deps));
  app.route('/', reclaimRoutes(deps));
  app.route('/', leaseExtensionRoutes(deps));
  app.route('/', availabilityRoutes(deps));
  app.route('/', usageRoutes(deps));
  app.route('/', eventRoutes(deps));

  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'Leasehold API',
      version: API_VERSION,
      description:
        'Multi-tenant bare-metal leasing in front of OpenStack Ironic. Every error has the shape ' +
        '`{"error": {"code", "message", "details"}}`; timestamps are RFC 3339 UTC; durations ISO 8601.',
    },
    security: [{ bearer: [] }, { authToken: [] }],
  });
  app.route('/baremetal', gatewayApp(deps, deps.ironic ?? null));
  app.route('/', docsPage());
  app.route('/', webUi());
  return app;
}
