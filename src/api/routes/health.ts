import { createRoute, z } from '@hono/zod-openapi';
import { BackendUnavailableError } from '../../domain/errors.js';
import { createRouter, type ApiDeps } from '../context.js';
import { errorResponses, jsonResponse } from '../schemas.js';

const CHECK_TIMEOUT_MS = 2_000;

const healthz = createRoute({
  method: 'get',
  path: '/healthz',
  tags: ['health'],
  summary: 'Liveness: the process answers',
  responses: { 200: jsonResponse(z.object({ status: z.literal('ok') }), 'Alive') },
});

const readyz = createRoute({
  method: 'get',
  path: '/readyz',
  tags: ['health'],
  summary: 'Readiness: the store, the hardware driver, (under Keystone) Keystone and (when configured) the network service answer',
  responses: {
    200: jsonResponse(
      z.object({ status: z.literal('ready'), checks: z.record(z.string(), z.string()) }),
      'Ready to serve',
    ),
    ...errorResponses(503),
  },
});

export function healthRoutes(deps: ApiDeps) {
  const router = createRouter();

  router.openapi(healthz, (c) => c.json({ status: 'ok' as const }, 200));

  router.openapi(readyz, async (c) => {
    const networks = deps.networks?.backend ?? null;
    const [store, driver, identity, network] = await Promise.all([
      check(() => deps.store.ping()),
      check(() => deps.driver.ping()),
      deps.identity.kind === 'keystone' ? check(() => deps.identity.ping()) : Promise.resolve(null),
      networks ? check(() => networks.ping()) : Promise.resolve(null),
    ]);
    const checks: Record<string, string> = { store, [`driver (${deps.driver.kind})`]: driver };
    if (identity !== null) checks['identity (keystone)'] = identity;
    if (network !== null && networks) checks[`networks (${networks.kind})`] = network;
    const failing = Object.entries(checks).filter(([, v]) => v !== 'ok');
    if (failing.length > 0) {
      throw new BackendUnavailableError(`not ready: ${failing.map(([k, v]) => `${k}: ${v}`).join('; ')}`, {
        details: { checks },
      });
    }
    return c.json({ status: 'ready' as const, checks }, 200);
  });

  return router;
}

async function check(probe: () => Promise<void>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      }),
    ]);
    return 'ok';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    clearTimeout(timer);
  }
}
