import { defineConfig } from 'vitest/config';

// The real-Ironic suites (test/ironic/**/*.ironic.ts): `npm run test:ironic`. Not part of `npm test` yet.
// Each suite starts its own Ironic (≈ 135 MiB, one Python process, ≈ 2 s); the first run may install the
// Debian packages (≈ 45 s), hence the long hook timeout.
export default defineConfig({
  test: {
    include: ['test/ironic/**/*.ironic.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 600_000,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
