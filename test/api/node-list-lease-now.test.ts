import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseEngine } from '../../src/engine/lease-engine.js';
import { createLogger } from '../../src/logger.js';
import { createProjectUser, startApp, type TestApp } from '../support/test-app.js';

// The node list is served from per-replica copies of each node's JSON (src/api/node-list-json.ts) and of the lease in
// force on each (src/leasing/leases-in-force.ts): a copy made before a lease started or ended, or before its project
// was renamed, must never show the lease as it was.
const NODES = [
  { uuid: '1e5e0001-0000-4000-8000-000000000001', name: 'gpu-a', owner: 'physics-lab', properties: { memory_mb: 65536, cpus: 16, local_gb: 480, cpu_arch: 'x86_64' } },
  { uuid: '1e5e0002-0000-4000-8000-000000000002', name: 'gpu-b', owner: 'physics-lab', properties: { memory_mb: 65536, cpus: 16, local_gb: 480, cpu_arch: 'x86_64' } },
];
const T0 = Date.parse('2030-01-01T00:00:00Z');
const H = 3_600_000;

let t: TestApp;
let engine: LeaseEngine;
let astro: { projectId: string; userId: string; token: string };

beforeAll(async () => {
  t = await startApp({ nodes: NODES });
  engine = new LeaseEngine({ store: t.store, driver: t.driver, clock: t.clock, logger: createLogger('silent'), inventory: t.inventory, networks: t.teardown, watchMs: 0 });
  const owner = await createProjectUser(t, 'physics-lab', 'member');
  astro = await createProjectUser(t, 'astro', 'member');
  expect((await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'gpu-a' } })).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await t?.close();
});

type Listed = { name: string; lease: { id: string; project_name: string } | null };
const listed = async (token?: string): Promise<readonly Listed[]> => {
  const reply = await t.request('GET', '/v1/nodes', token === undefined ? {} : { token });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  return reply.body.nodes;
};

describe('the node list and the lease in force now', () => {
  it('a lease that just started shows on the next list, and one that just ended is gone from it, whatever was listed before', async () => {
    const lease = await t.request('POST', '/v1/leases', {
      token: astro.token,
      body: { name: 'short', nodes: ['gpu-a'], start: new Date(T0 + H).toISOString(), duration: '1h' },
    });
    expect(lease.status, JSON.stringify(lease.body)).toBe(201);
    // Listed (and so copied) before the start: no lease, and nothing for the lessee.
    expect((await listed()).find((n) => n.name === 'gpu-a')?.lease).toBeNull();
    expect(await listed(astro.token)).toEqual([]);

    // At the start exactly, before the engine has written anything: the lease shows (it grants access from now).
    await t.clock.advanceTo(new Date(T0 + H));
    expect((await listed()).find((n) => n.name === 'gpu-a')?.lease).toMatchObject({ id: lease.body.id, project_name: 'astro' });
    await engine.runDue();
    expect((await listed()).find((n) => n.name === 'gpu-a')?.lease).toMatchObject({ id: lease.body.id, project_name: 'astro' });
    // The lessee's project renamed: the next list shows the new name.
    expect((await t.request('PATCH', `/v1/projects/${astro.projectId}`, { body: { name: 'astronomy' } })).status).toBe(200);
    expect((await listed()).find((n) => n.name === 'gpu-a')?.lease).toMatchObject({ id: lease.body.id, project_name: 'astronomy' });
    expect((await listed(astro.token)).map((n) => n.name)).toEqual(['gpu-a']);

    // At the end exactly, before the engine has done anything about it: access ends with the lease, not with the work.
    await t.clock.advanceTo(new Date(T0 + 2 * H));
    expect((await listed()).find((n) => n.name === 'gpu-a')?.lease).toBeNull();
    expect(await listed(astro.token)).toEqual([]);
  });
});
