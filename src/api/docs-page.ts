import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Hono } from 'hono';
import { securityHeaders } from './security-headers.js';

const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};

/** Swagger UI's start, a file of its own so the page runs no inline script. */
const INIT = `window.ui = SwaggerUIBundle({
  url: document.getElementById('docs').dataset.spec,
  dom_id: '#docs',
  deepLinking: true,
  persistAuthorization: false,
});
`;

/**
 * The page's policy: its scripts and stylesheet from /docs/assets only. Swagger UI's stylesheet draws its icons
 * with data: URIs; "Try it out" calls the API on this origin. Swagger UI (React) sets styles through the CSSOM,
 * which CSP does not govern.
 */
const DOCS_POLICY = securityHeaders({
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
});

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Leasehold API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
  <div id="docs" data-spec="/openapi.json"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/docs-init.js"></script>
</body>
</html>`;

/**
 * The API reference at /docs, rendered by Swagger UI from /openapi.json. Its assets are served from the
 * installed swagger-ui-dist package, not a CDN: operators run this on closed networks.
 */
export function docsPage(): Hono {
  const app = new Hono();
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const cache = new Map<string, Buffer>();

  app.get('/docs', DOCS_POLICY, (c) => c.html(PAGE));
  app.get('/docs/assets/docs-init.js', DOCS_POLICY, (c) =>
    c.body(INIT, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' }),
  );
  app.get('/docs/assets/:file', DOCS_POLICY, async (c) => {
    const file = c.req.param('file');
    const type = ASSETS[file];
    if (!type) return c.notFound();
    let body = cache.get(file);
    if (!body) {
      body = await readFile(join(dir, file));
      cache.set(file, body);
    }
    return c.body(new Uint8Array(body), 200, { 'content-type': type, 'cache-control': 'public, max-age=86400' });
  });
  return app;
}
