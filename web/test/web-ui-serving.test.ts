// @vitest-environment node
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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
const assetCache = new Map<string, Uint8Array<ArrayBuffer>>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'leasehold-web-'));
  await mkdir(join(dir, 'assets'));
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>Leasehold</title>');
  await writeFile(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  await writeFile(join(dir, 'assets', 'index-abc123.css'), 'body{}');
  await writeFile(join(dir, 'favicon.svg'), '<svg/>');
  await copyFile(new URL('../public/favicon.ico', import.meta.url), join(dir, 'favicon.ico'));
  await writeFile(join(dir, '..', 'secret.txt'), 'outside');
  app = new Hono();
  app.get('/v1/things', (c) => c.json({ things: [] }));
  app.route('/', webUi(dir, { assetCache }));
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

  test('/favicon.ico is a real icon (a 32×32 PNG in an ICO), not the page, for what asks for it whatever the page links', async () => {
    const res = await app.request('/favicon.ico', page);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/x-icon');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect([...bytes.subarray(0, 6)]).toEqual([0, 0, 1, 0, 1, 0]); // reserved, type icon, one image
    expect([bytes[6], bytes[7]]).toEqual([32, 32]);
    expect(bytes.subarray(22, 26).toString('latin1')).toBe('\x89PNG');
    expect(bytes.equals(await readFile(new URL('../public/favicon.ico', import.meta.url)))).toBe(true);
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

  test('a file of the build is served under its one name only: other spellings are 404 and cache nothing', async () => {
    const spellings = [
      '/assets//index-abc123.js',
      '//assets/index-abc123.js',
      '/assets///index-abc123.js',
      '/assets/%69ndex-abc123.js',
      '/%61ssets/index-abc123.js',
      '/assets/index-abc123.js/',
      '/assets/index-abc123%2Ejs',
      '/assets/.%2Findex-abc123.js',
    ];
    for (let k = 1; k <= 50; k++) spellings.push(`/assets/${'/'.repeat(k)}index-abc123.js`);
    for (const path of spellings) {
      for (const headers of [{ accept: '*/*' }, page.headers]) {
        const res = await app.request(path, { headers });
        expect(res.status, `${path} ${headers.accept}`).toBe(404);
        expect(await res.json()).toEqual({ error: { code: 'not_found' } });
      }
    }
    expect((await app.request('/assets/index-abc123.js')).status).toBe(200);
    expect((await app.request('/assets/index-abc123.css')).status).toBe(200);
    expect((await app.request('/assets/index-abc123.js')).status).toBe(200);
    // At most one copy per real file, whatever was asked.
    expect([...assetCache.keys()].sort()).toEqual(['/assets/index-abc123.css', '/assets/index-abc123.js']);
  });

  test('the UI forbids framing, inline scripts and referrers, and is never sniffed', async () => {
    for (const [path, init] of [['/', page], ['/nodes', page], ['/assets/index-abc123.js', {}]] as const) {
      const res = await app.request(path, init);
      expect(res.status, path).toBe(200);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("default-src 'none'");
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).not.toMatch(/script-src[^;]*'unsafe-(inline|eval)'/);
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toContain("connect-src 'self'");
      expect(res.headers.get('referrer-policy'), path).toBe('no-referrer');
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
    }
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

test('the API reference runs no inline script, under a policy of its own that forbids framing', async () => {
  const real = createApp({ logger: createLogger('silent') } as unknown as ApiDeps);
  const docs = await real.request('/docs');
  const html = await docs.text();
  expect(html).not.toMatch(/<script>/);
  for (const src of html.matchAll(/<script src="([^"]+)"/g)) {
    const script = await real.request(src[1]!);
    expect(script.status, src[1]).toBe(200);
    expect(script.headers.get('content-type'), src[1]).toMatch(/^text\/javascript/);
  }
  expect(await (await real.request('/docs/assets/docs-init.js')).text()).toContain('SwaggerUIBundle');
  const csp = docs.headers.get('content-security-policy') ?? '';
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).toContain("frame-ancestors 'none'");
  expect(docs.headers.get('referrer-policy')).toBe('no-referrer');
  expect(docs.headers.get('x-content-type-options')).toBe('nosniff');
});
