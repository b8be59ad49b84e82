// @vitest-environment node
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createApp } from '../../src/api/app.js';
import type { ApiDeps } from '../../src/api/context.js';
import { webUi } from '../../src/api/web-ui.js';
import { createLogger } from '../../src/logger.js';

// The server side of the UI (src/api/web-ui.ts): files of the build, the SPA fallback, and the API left alone.
let dir: string;
let app: Hono;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'leasehold-web-'));
  await mkdir(join(dir, 'assets'));
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>Leasehold</title>');
  await writeFile(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  await writeFile(join(dir, 'favicon.svg'), '<svg/>');
  await writeFile(join(dir, '..', 'secret.txt'), 'outside');
  app = new Hono();
  app.get('/v1/things', (c) => c.json({ things: [] }));
  app.route('/', webUi(dir));
  app.notFound((c) => c.json({ error: { code: 'not_found' } }, 404));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await rm(join(dir, '..', 'secret.txt'), { force: true });
});

const page = { headers: { accept: 'text/html,application/xhtml+xml' } };

describe('the built UI', () => {
  test('/ and the UI paths a browser opens get index.html, revalidated', async () => {
    for (const path of ['/', '/nodes', '/leases/6f1c0b7e-0000-4000-8000-000000000001']) {
      const res = await app.request(path, page);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(await res.text()).toContain('<title>Leasehold</title>');
    }
  });

  test('hashed assets are cached for a year, other files revalidated', async () => {
    const asset = await app.request('/assets/index-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    const icon = await app.request('/favicon.svg');
    expect(icon.headers.get('content-type')).toBe('image/svg+xml');
    expect(icon.headers.get('cache-control')).toBe('no-cache');
  });

  test('a missing asset, a non-page request and a path outside the build are the JSON 404', async () => {
    for (const path of ['/assets/gone.js', '/nodes', '/../secret.txt', '/%2e%2e/secret.txt']) {
      const res = await app.request(path, { headers: { accept: 'application/json' } });
      expect(res.status, path).toBe(404);
      expect(await res.json()).toEqual({ error: { code: 'not_found' } });
    }
  });

  test('API paths are never the UI: their own routes, or the JSON 404', async () => {
    expect(await (await app.request('/v1/things', page)).json()).toEqual({ things: [] });
    for (const path of ['/v1/unknown', '/baremetal/v1/x', '/docs/x', '/healthz/x']) {
      const res = await app.request(path, page);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/json/);
    }
    expect((await app.request('/nodes', { method: 'POST', ...page })).status).toBe(404);
  });

  test('without a build, / says how to build it, in plain text', async () => {
    const bare = new Hono();
    bare.route('/', webUi(join(dir, 'missing')));
    const res = await bare.request('/');
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toContain('npm run build');
  });
});

test('in the real app, the API keeps its routes and its JSON 404 around the UI', async () => {
  const real = createApp({ logger: createLogger('silent') } as unknown as ApiDeps);
  expect((await real.request('/openapi.json')).status).toBe(200);
  expect((await real.request('/docs')).headers.get('content-type')).toMatch(/^text\/html/);
  const unknown = await real.request('/no/such/api', { headers: { accept: 'application/json' } });
  expect(unknown.status).toBe(404);
  expect((await unknown.json()).error.code).toBe('not_found');
  const root = await real.request('/', page);
  expect([200, 503]).toContain(root.status); // 503: dist/web not built in this checkout
});
