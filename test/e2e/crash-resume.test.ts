import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../support/http.js';
import { startLeaseholdServer, type LeaseholdServer } from '../support/server.js';

const NODES = JSON.stringify(
  [1, 2].map((i) => ({
    uuid: `c4a50000-0000-4000-8000-00000000000${i}`,
    name: `crash-${i}`,
    owner: 'crashers',
    properties: { memory_mb: 8192, cpus: 4, local_gb: 100, cpu_arch: 'x86_64' },
  })),
);

describe('the lease engine after a crash', () => {
  let lh: LeaseholdServer | undefined;
  afterAll(async () => {
    await lh?.kill();
    await lh?.stop();
  });

  it('a process killed with SIGKILL while releasing nodes finishes the release exactly once after a restart', async () => {
    lh = await startLeaseholdServer({
      LEASEHOLD_SIMULATED_NODES: NODES,
      // Cleaning takes 3 s: long enough to kill the process in the middle of it.
      LEASEHOLD_SIMULATED_TIMINGS: JSON.stringify({ powerMs: 50, cleanMs: 3_000, manageMs: 50, undeployMs: 50, consoleMs: 20 }),
    });
    const cass = await lh.member('crashers', 'cass');

    const lease = await cass.call('POST', '/v1/leases', { nodes: ['crash-1', 'crash-2'], duration: '2s' });
    expect(lease.status, JSON.stringify(lease.body)).toBe(201);
    const id = lease.body.id as string;
    const state = () => cass.ok('GET', `/v1/leases/${id}`);
    await until(async () => (await state()).allocations.some((a: { step: string | null }) => a.step === 'wait_available'), 15_000, 'cleaning under way');

    await lh.kill(); // SIGKILL in the middle of cleaning
    await lh.restart();

    await until(async () => (await state()).state === 'ended', 20_000, 'the lease ended after the restart');
    const events = await lh.admin.events({ lease_id: id, type: 'allocation.released' });
    expect(events.map((e: { node_id: string }) => e.node_id).sort()).toEqual([
      'c4a50000-0000-4000-8000-000000000001',
      'c4a50000-0000-4000-8000-000000000002',
    ]);
    const nodes = await lh.admin.ok('GET', '/v1/nodes');
    for (const node of nodes.nodes) expect(node).toMatchObject({ provision_state: 'available', lessee: null, quarantined: false });
    expect(await lh.stop()).toBe(0);
    lh = undefined;
  }, 90_000);
});
