import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The UI is served by the Leasehold process itself (src/api/web-ui.ts reads dist/web), so it builds next to the
// server's own output. In development `npm run dev:web` serves it from Vite and proxies the API to a running
// `leasehold serve` (LEASEHOLD_DEV_API overrides where).
const api = process.env.LEASEHOLD_DEV_API ?? 'http://127.0.0.1:8080';
const apiPaths = ['/v1', '/baremetal', '/openapi.json', '/docs', '/healthz', '/readyz'];
// Source maps are the whole source of the UI, served to anyone who asks (the index's alone is 1.4 MB): a build
// makes them only when asked, for debugging (LEASEHOLD_WEB_SOURCEMAP=1 npm run build:web).
const sourcemap = process.env.LEASEHOLD_WEB_SOURCEMAP === '1';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    sourcemap,
    // xterm.js alone is ~300 kB; the warning would only repeat that.
    chunkSizeWarningLimit: 1000,
  },
  server: {
    host: '127.0.0.1',
    port: 5173,
    // ws: true carries the serial console's WebSocket (/v1/consoles/{id}/stream) through the proxy.
    proxy: Object.fromEntries(apiPaths.map((path) => [path, { target: api, ws: path === '/v1' }])),
  },
});
