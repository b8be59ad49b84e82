import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('service endpoints', () => {
  it('/healthz answers without a token', async () => {
    const res = await t.request('GET', '/healthz', { token: null });
    expect(res).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('/readyz reports the store and the driver, and fails while the hardware backend is down', async () => {
    const ok = await t.request('GET', '/readyz', { token: null });
    expect(ok.status).toBe(200);
    expect(ok.body.checks).toEqual({ store: 'ok', 'driver (simulated)': 'ok', 'networks (simulated)': 'ok' });
    t.driver.setFaults({ unavailable: true });
    try {
      const down = await t.request('GET', '/readyz', { token: null });
      expect(down.status).toBe(503);
      expect(down.body.error.code).toBe('backend_unavailable');
      expect(down.body.error.details.checks.store).toBe('ok');
    } finally {
      t.driver.setFaults({ unavailable: false });
    }
  });

  it('a sync while the hardware backend is down is a retryable 503 and keeps the inventory', async () => {
    t.driver.setFaults({ unavailable: true });
    try {
      const res = await t.request('POST', '/v1/nodes/sync');
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('backend_unavailable');
    } finally {
      t.driver.setFaults({ unavailable: false });
    }
    expect((await t.request('GET', '/v1/nodes')).body.nodes.length).toBe(5);
  });

  it('/openapi.json documents every route with its schemas and auth', async () => {
    const res = await t.request('GET', '/openapi.json', { token: null });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    const paths = Object.keys(res.body.paths);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/v1/projects',
        '/v1/projects/{id}',
        '/v1/users',
        '/v1/users/{id}',
        '/v1/tokens',
        '/v1/tokens/{id}',
        '/v1/nodes',
        '/v1/nodes/{id}',
        '/v1/nodes/sync',
        '/v1/me',
        '/healthz',
        '/readyz',
      ]),
    );
    expect(res.body.components.schemas).toHaveProperty('Error');
    expect(res.body.components.schemas).toHaveProperty('Node');
    expect(res.body.components.securitySchemes).toHaveProperty('authToken');
  });

  it('/docs renders the API reference from local assets', async () => {
    const page = await t.request('GET', '/docs', { token: null });
    expect(page.status).toBe(200);
    expect(page.body).toContain('/openapi.json');
    const js = await t.request('GET', '/docs/assets/swagger-ui-bundle.js', { token: null });
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toContain('javascript');
    expect((await t.request('GET', '/docs/assets/../../package.json', { token: null })).status).toBe(404);
  });

  it('an unknown route is a 404 in the one error shape', async () => {
    const res = await t.request('GET', '/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'not_found' });
  });

  it('echoes a request id so a client can find its request in the logs', async () => {
    const res = await t.request('GET', '/healthz', { token: null, headers: { 'x-request-id': 'abc-123' } });
    expect(res.headers.get('x-request-id')).toBe('abc-123');
    const fresh = await t.request('GET', '/healthz', { token: null });
    expect(fresh.headers.get('x-request-id')).toMatch(/.{8,}/);
  });
});
