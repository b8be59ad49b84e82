import { readFile, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';

/** Where `vite build` writes the UI (web/vite.config.ts): <package>/dist/web, from src/api and dist/api alike. */
export const DEFAULT_WEB_DIR = fileURLToPath(new URL('../../dist/web/', import.meta.url));

/** Paths the UI never answers, so the API's own routes and its JSON 404 stay as they are. */
const API_PREFIXES = ['/v1', '/baremetal', '/openapi.json', '/docs', '/healthz', '/readyz'];

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};

// Vite puts content-hashed files under assets/: their name changes with their content, so browsers may keep them
// for a year. Everything else (index.html, favicon) is revalidated, so a new build is picked up at once.
const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

const NOT_BUILT =
  'The Leasehold web UI is not built.\n\n' +
  'Build it with `npm run build` (server and UI) and restart `leasehold serve`,\n' +
  'or run `npm run dev:web` for the development server with live reload.\n\n' +
  'The API works without it: /docs is its reference.\n';

function safeDecode(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

function isApiPath(path: string): boolean {
  return API_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`));
}

/**
 * The web UI (web/, built into dist/web) at `/`, mounted after every API route. Files of the build are served as
 * they are; any other GET of a page (Accept: text/html) gets index.html, so the UI's own paths (/nodes,
 * /leases/<id>) work on reload and in links. Everything else falls through to the API's JSON 404.
 */
export function webUi(dir: string = DEFAULT_WEB_DIR): Hono {
  const root = resolve(dir);
  const app = new Hono();
  // Hashed assets never change under a name: read once per process.
  const assetCache = new Map<string, Uint8Array<ArrayBuffer>>();

  async function readFileInRoot(relative: string): Promise<Uint8Array<ArrayBuffer> | null> {
    const file = resolve(root, `.${relative}`);
    if (file !== root && !file.startsWith(root + sep)) return null; // ../ tricks
    try {
      if (!(await stat(file)).isFile()) return null;
      return new Uint8Array(await readFile(file));
    } catch {
      return null;
    }
  }

  app.on(['GET', 'HEAD'], '*', async (c, next) => {
    const path = c.req.path;
    if (isApiPath(path)) return next();

    if (path !== '/' && !path.endsWith('/')) {
      const cached = assetCache.get(path);
      const body = cached ?? (await readFileInRoot(safeDecode(path)));
      if (body) {
        const hashed = path.startsWith('/assets/');
        if (hashed && !cached) assetCache.set(path, body);
        return c.body(body, 200, {
          'content-type': TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream',
          'cache-control': hashed ? IMMUTABLE : REVALIDATE,
          'x-content-type-options': 'nosniff',
        });
      }
    }

    // Only a browser navigating gets the page; a script or API client asking for a missing file (a stale
    // /assets/… link) gets the JSON 404, not HTML it cannot use.
    const wantsPage = path === '/' || (c.req.header('accept') ?? '').includes('text/html');
    if (!wantsPage) return next();
    // Read at each request (a few hundred bytes): a rebuild is picked up without a restart.
    const index = await readFileInRoot('/index.html');
    if (!index) return c.text(NOT_BUILT, 503, { 'cache-control': REVALIDATE });
    return c.body(index, 200, {
      'content-type': TYPES['.html']!,
      'cache-control': REVALIDATE,
      'x-content-type-options': 'nosniff',
    });
  });
  return app;
}
