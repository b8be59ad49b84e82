import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// Three projects, one run (`npm test`, and CI's .ci/run through it), one summary line at the end:
// - `default`: test/**/*.test.ts. PGlite instances take ~1-3 s to start and ~100 MiB each; two workers fit two cores.
// - `ironic`: test/ironic/**/*.ironic.ts, the suites against a real standalone Ironic (test/support/ironic.ts;
//   each file starts its own Ironic, ≈ 135 MiB, ≈ 2 s, and most their own `leasehold serve`). They run after the
//   default project (groupOrder), so their timings are not measured on a machine busy with the unit tests. The
//   first run may install the Debian packages (≈ 45 s, root only), hence the long hook timeout. Outside CI a
//   machine without Ironic skips them loudly; under CI (CI set) that is an error.
// - `keystone`: test/keystone/**/*.keystone.ts, the suites against a real Keystone (test/support/keystone.ts; each
//   file starts its own, ≈ 3 s from a bootstrapped seed made once in ≈ 11 s, ≈ 140 MiB, and most an Ironic behind
//   it). One file at a time, in a group of its own, last (vitest refuses projects of one group with different
//   maxWorkers, and the Ironic group runs two at a time); the first run may install Debian's keystone (≈ 20-70 s,
//   root only). Outside CI a machine without Keystone skips them loudly; under CI that is an error (.ci/run
//   installs it).
// - `neutron`: test/neutron/**/*.neutron.ts, tenant networks on leased nodes against a real Neutron (Debian's Zed
//   neutron-server with the ML2 baremetal driver and ironic-neutron-agent, on MariaDB and a RabbitMQ vhost of its own)
//   beside Keystone and an Ironic with the neutron network interface (test/support/neutron.ts: ≈ 25-30 s to start the
//   lab under load, ≈ 620 MiB). One file at a time, in a group of its own after every other; the first run may install
//   Debian's neutron-server and ironic-neutron-agent (≈ 20 s, root only). Outside CI a machine without them (or
//   without MariaDB or RabbitMQ) skips loudly; under CI that is an error (.ci/run installs them).
// - `ironic-figures`: test/ironic/figures.ironic.ts, the throughput figures (200 nodes), alone and last so that
//   nothing else runs on the machine meanwhile.
// - `web`: web/**/*.test.{ts,tsx}, the UI's component tests in jsdom (React Testing Library), and the check that
//   web/src/api/schema.d.ts matches the API (that file opts into the node environment). Fast; runs with default.
// - `browser`: test/browser/**/*.browser.ts, Debian's Chromium (playwright-core, test/support/browser.ts) against
//   the real `leasehold serve` with the built UI (timings of seconds: a lease ends while the page watches); one
//   file at a time, alone, after the Ironic projects. Outside CI a missing /usr/bin/chromium or UI build skips
//   them loudly; under CI it is an error (.ci/run installs Chromium).
// The real-Ironic suites alone: `npm run test:ironic` (both Ironic projects); `--project ironic` skips the figures.
export default defineConfig({
  test: {
    pool: 'forks',
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'default',
          include: ['test/**/*.test.ts'],
          maxWorkers: 2,
          testTimeout: 30_000,
          hookTimeout: 60_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        plugins: [react()],
        test: {
          name: 'web',
          include: ['web/**/*.test.{ts,tsx}'],
          environment: 'jsdom',
          setupFiles: ['web/test/setup.ts'],
          // Projects of one group must share maxWorkers (vitest refuses otherwise; on 2 cores the default is 1).
          maxWorkers: 2,
          testTimeout: 30_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          include: ['test/browser/**/*.browser.ts'],
          maxWorkers: 1,
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // What a page shows follows the server by polling: wait for it as long as a locator would.
          expect: { poll: { timeout: 15_000, interval: 100 } },
          sequence: { groupOrder: 4 },
        },
      },
      {
        extends: true,
        test: {
          name: 'ironic',
          include: ['test/ironic/**/*.ironic.ts'],
          exclude: ['test/ironic/figures.ironic.ts'],
          maxWorkers: 2,
          testTimeout: 180_000,
          hookTimeout: 600_000,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'keystone',
          include: ['test/keystone/**/*.keystone.ts'],
          maxWorkers: 1,
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 600_000,
          sequence: { groupOrder: 5 },
        },
      },
      {
        extends: true,
        test: {
          name: 'neutron',
          include: ['test/neutron/**/*.neutron.ts'],
          maxWorkers: 1,
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 600_000,
          sequence: { groupOrder: 6 },
        },
      },
      {
        extends: true,
        test: {
          // test/faults: the database going away, replicas killed with SIGKILL (own PostgreSQL server, real
          // Ironic, real server processes). Alone, after the Ironic suites: recovery times are asserted with
          // margins for a busy machine, not for one shared with other suites.
          name: 'faults',
          include: ['test/faults/**/*.fault.ts'],
          maxWorkers: 1,
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 600_000,
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: {
          name: 'ironic-figures',
          include: ['test/ironic/figures.ironic.ts'],
          maxWorkers: 1,
          testTimeout: 300_000,
          hookTimeout: 600_000,
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
