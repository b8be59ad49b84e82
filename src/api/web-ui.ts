import { readFile, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono, type Context } from 'hono';
import { securityHeaders } from './security-headers.js';

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

/**
 * The UI's policy. Scripts only from the build (Vite emits no inline script). Styles: xterm.js injects `<style>`
 * elements for the terminal's cell sizes and colours (xtermjs/xterm.js#4445; no nonce option), so `<style>`
 * elements are allowed inline; style attributes are not (React and xterm set styles through the CSSOM, which CSP
 * does not govern). `connect-src 'self'` covers the API and the console's same-origin WebSocket.
 */
const UI_POLICY = securityHeaders({
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  styleSrcElem: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  fontSrc: ["'self'"],
  connectSrc: ["'self'"],
  manifestSrc: ["'self'"],
});

/**
 * A path as the build names its files and the UI its pages: segments of letters, digits, `_`, `-`, `~` and `.`, none
 * empty or starting with a dot. Anything else — `//`, percent-escapes, `..` — names no file and no page: a 404,
 * never looked up. Each spelling of one file used to get a cache entry of its own (a 1.4 MB source map requested
 * with 1 to 300 slashes: the server's RSS went from 514 to 843 MB).
 */
const CANONICAL = /^(?:\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)+$/;

/** The path exactly as the client sent it (percent-escapes kept), if it is canonical; else null. */
function canonicalPath(c: Context): string | null {
  const raw = new URL(c.req.url).pathname;
  return CANONICAL.test(raw) ? raw : null;
}

export interface WebUiOptions {
  /**
   * The in-memory copies of hashed assets, by path (tests observe it). Only files of the build get an entry, so it
   * holds at most one per file under assets/.
   */
  readonly assetCache?: Map<string, Uint8Array<ArrayBuffer>>;
}

function isApiPath(path: string): boolean {
  return API_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`));
}

/**
 * The web UI (web/, built into dist/web) at `/`, mounted after every API route. Files of the build are served as
 * they are; any other GET of a page (Accept: text/html) gets index.html, so the UI's own paths (/nodes,
 * /leases/<id>) work on reload and in links. Everything else falls through to the API's JSON 404.
 */
export function webUi(dir: string = DEFAULT_WEB_DIR, options: WebUiOptions = {}): Hono {
  const root = resolve(dir);
  const app = new Hono();
  // Hashed assets never change under a name: read once per process.
  const assetCache = options.assetCache ?? new Map<string, Uint8Array<ArrayBuffer>>();

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

  app.on(['GET', 'HEAD'], '*', UI_POLICY, async (c, next) => {
    if (isApiPath(c.req.path)) return next();
    const path = canonicalPath(c);
    const hashed = c.req.path.startsWith('/assets/');

    if (path) {
      const cached = assetCache.get(path);
      const body = cached ?? (await readFileInRoot(path));
      if (body) {
        if (hashed && !cached) assetCache.set(path, body);
        return c.body(body, 200, {
          'content-type': TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream',
          'cache-control': hashed ? IMMUTABLE : REVALIDATE,
        });
      }
    }

    // Only a browser navigating gets the page; a script or API client asking for a missing file (a stale
    // /assets/… link) gets the JSON 404, not HTML it cannot use. Nothing under /assets/ is a page of the UI.
    const navigating = (c.req.header('accept') ?? '').includes('text/html');
    const wantsPage = c.req.path === '/' || (path !== null && !hashed && navigating);
    if (!wantsPage) return next();
    // Read at each request (a few hundred bytes): a rebuild is picked up without a restart.
    const index = await readFileInRoot('/index.html');
    if (!index) return c.text(NOT_BUILT, 503, { 'cache-control': REVALIDATE });
    return c.body(index, 200, { 'content-type': TYPES['.html']!, 'cache-control': REVALIDATE });
  });
  return app;
}
