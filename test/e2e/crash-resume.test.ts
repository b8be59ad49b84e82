import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServerProcess, type ServerProcess } from '../support/processes.js';

const ADMIN = 'lh_crash-admin-token-0123456789abcdef';
const NODES = JSON.stringify(
  [1, 2].map((i) => ({
    uuid: `c4a50000-0000-4000-8000-00000000000${i}`,
    name: `crash-${i}`,
    owner: 'crashers',
    properties: { memory_mb: 8192, cpus: 4, local_gb: 100, cpu_arch: 'x86_64' },
  })),
);

describe('the lease engine after a crash', () => {
  let server: ServerProcess | undefined;
  let dataDir = '';
  afterAll(async () => {
    server?.kill();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('a process killed with SIGKILL while releasing nodes finishes the release exactly once after a restart', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'leasehold-crash-'));
    const env = {
      LEASEHOLD_DATA_DIR: dataDir,
      LEASEHOLD_ADMIN_TOKEN: ADMIN,
      LEASEHOLD_SIMULATED_NODES: NODES,
      // Cleaning takes 3 s: long enough to kill the process in the middle of it.
      LEASEHOLD_SIMULATED_TIMINGS: JSON.stringify({ powerMs: 50, cleanMs: 3_000, manageMs: 50, undeployMs: 50, consoleMs: 20 }),
      LEASEHOLD_CLEANING_GAP: '0s',
    };
    server = await startServerProcess(env);
    const call = async (token: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server!.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json().catch(() => null)) as any };
    };
    await call(ADMIN, 'POST', '/v1/projects', { name: 'crashers' });
    const user = await call(ADMIN, 'POST', '/v1/users', { name: 'cass', project_id: 'crashers', role: 'member' });
    const token = (await call(ADMIN, 'POST', '/v1/tokens', { user_id: user.body.id })).body.token as string;

    const lease = await call(token, 'POST', '/v1/leases', { nodes: ['crash-1', 'crash-2'], duration: '2s' });
    expect(lease.status, JSON.stringify(lease.body)).toBe(201);
    const id = lease.body.id as string;
    await until(async () => (await call(token, 'GET', `/v1/leases/${id}`)).body.allocations.some((a: { step: string | null }) => a.step === 'wait_available'));

    server.kill(); // SIGKILL in the middle of cleaning
    await new Promise((resolve) => server!.proc.once('exit', resolve));
    server = await startServerProcess(env);

    await until(async () => (await call(token, 'GET', `/v1/leases/${id}`)).body.state === 'ended', 20_000);
    const events = await call(ADMIN, 'GET', `/v1/events?lease_id=${id}&type=allocation.released&limit=100`);
    expect(events.body.events.map((e: { node_id: string }) => e.node_id).sort()).toEqual([
      'c4a50000-0000-4000-8000-000000000001',
      'c4a50000-0000-4000-8000-000000000002',
    ]);
    const nodes = await call(ADMIN, 'GET', '/v1/nodes');
    for (const node of nodes.body.nodes) expect(node).toMatchObject({ provision_state: 'available', lessee: null, quarantined: false });
    expect(await server.stop()).toBe(0);
    server = undefined;
  }, 90_000);
});

async function until(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
