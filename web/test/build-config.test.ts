// @vitest-environment node
import { afterEach, expect, test, vi } from 'vitest';

// The build (web/vite.config.ts) that the server serves from dist/web.
afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

async function buildOptions() {
  const config = (await import('../vite.config.js')).default as { build?: { sourcemap?: unknown } };
  return config.build ?? {};
}

test('the served build has no source maps unless a debugging build asks for them', async () => {
  vi.stubEnv('LEASEHOLD_WEB_SOURCEMAP', '');
  expect((await buildOptions()).sourcemap).toBe(false);
  vi.resetModules();
  vi.stubEnv('LEASEHOLD_WEB_SOURCEMAP', '1');
  expect((await buildOptions()).sourcemap).toBe(true);
});
