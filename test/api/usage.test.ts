import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseEngine } from '../../src/engine/lease-engine.js';
import { createLogger } from '../../src/logger.js';
import { ADMIN_TOKEN, createProjectUser, startApp, type TestApp } from '../support/test-app.js';

// One day of leases, asserted to the second: an early end, an extension, a replacement, and an Ironic outage over
// a lease's end that makes the next lease on that node start late (its cleaning could not run).
const GiB = 1024;
const node = (n: number, name: string, memory_gib: number, gpus: number) => ({
  uuid: `5a9e0000-0000-4000-8000-00000000000${n}`,
  name,
  owner: 'physics-lab',
  properties: { memory_mb: memory_gib * GiB, cpus: 16, local_gb: 480, cpu_arch: 'x86_64', gpus },
});
const NODES = [node(1, 'gpu-a', 64, 1), node(2, 'gpu-b', 64, 1), node(3, 'gpu-c', 96, 1), node(4, 'cpu-a', 32, 0)];
const T0 = Date.parse('2030-01-01T00:00:00Z');
const H = 3_600_000;
const at = (ms: number) => new Date(T0 + ms).toISOString();

let t: TestApp;
let engine: LeaseEngine;
let owner: { projectId: string; token: string };
let astro: { projectId: string; token: string };
let geo: { projectId: string; token: string };
let leaseA: { id: string; allocations: Array<{ node_name: string }> };
let releasedAt: string;

const usage = async (token: string, query: string) => {
  const res = await t.request('GET', `/v1/usage?${query}`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};
const seconds = (body: { groups: Array<{ name: string | null; node_seconds: number }> }) =>
  Object.fromEntries(body.groups.map((g) => [g.name, g.node_seconds]));
const DAY = `from=${at(0)}&to=${at(24 * H)}`;

beforeAll(async () => {
  t = await startApp({ nodes: NODES });
  engine = new LeaseEngine({ store: t.store, driver: t.driver, clock: t.clock, logger: createLogger('silent'), inventory: t.inventory, networks: t.teardown, watchMs: 0 });
  owner = await createProjectUser(t, 'physics-lab', 'member');
  astro = await createProjectUser(t, 'astro', 'member');
  geo = await createProjectUser(t, 'geo', 'member');
  const prices: Record<string, object> = { 'gpu-a': { price_per_node_hour: '2.50', currency: 'EUR' }, 'gpu-b': { price_per_node_hour: '3', currency: 'USD' } };
  for (const n of NODES) {
    const res = await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: n.name, ...prices[n.name] } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  const created = await t.request('POST', '/v1/leases', { token: astro.token, body: { nodes: ['gpu-a', 'gpu-b'], start: at(H), end: at(5 * H) } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  leaseA = created.body;
  const b = await t.request('POST', '/v1/leases', { token: geo.token, body: { nodes: ['cpu-a'], start: at(H), end: at(10 * H) } });
  expect(b.status).toBe(201);
  // The next lease on gpu-a starts right after lease A's (extended) end and its 10-minute cleaning gap.
  expect((await t.request('POST', '/v1/leases', { token: geo.token, body: { nodes: ['gpu-a'], start: at(6 * H + 10 * 60_000), end: at(8 * H + 10 * 60_000) } })).status).toBe(201);

  await t.clock.advanceTo(new Date(T0 + H));
  await engine.runDue();
  await t.clock.advanceTo(new Date(T0 + 2 * H));
  const replaced = await t.request('POST', `/v1/leases/${leaseA.id}/allocations/gpu-b/replace`, { token: astro.token });
  expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
  await engine.runDue();
  await t.clock.advanceTo(new Date(T0 + 3 * H));
  expect((await t.request('PATCH', `/v1/leases/${leaseA.id}`, { token: astro.token, body: { end: at(6 * H) } })).status).toBe(200);
  await t.clock.advanceTo(new Date(T0 + 4.5 * H));
  expect((await t.request('DELETE', `/v1/leases/${b.body.id}`, { token: geo.token })).status).toBe(200);
  await engine.runDue();

  // Ironic goes away half an hour before lease A ends and comes back an hour after.
  await t.clock.advanceTo(new Date(T0 + 5.5 * H));
  t.driver.setFaults({ unavailable: true });
  await t.clock.advanceTo(new Date(T0 + 6 * H));
  await engine.runDue();
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe('usage: what each lessee actually had', () => {
  it('during an outage over the end, usage already says access ended at the end, and the next lessee has had none', async () => {
    await t.clock.advanceTo(new Date(T0 + 6.5 * H));
    await engine.runDue();
    const astroUse = await usage(astro.token, `${DAY}&group_by=node`);
    expect(astroUse.as_of).toBe(at(6.5 * H));
    expect(seconds(astroUse)).toEqual({ 'gpu-a': 5 * 3600, 'gpu-c': 4 * 3600, 'gpu-b': 3600 });
    expect(seconds(await usage(geo.token, `${DAY}&group_by=node`))).toEqual({ 'cpu-a': 3.5 * 3600 });
  });

  it("after the outage, the next lessee's use begins when the node was released, not at its lease's start", async () => {
    await t.clock.advanceTo(new Date(T0 + 7 * H));
    t.driver.setFaults({ unavailable: false });
    for (let i = 0; i < 200; i++) {
      await engine.runDue();
      const events = await t.request('GET', `/v1/events?lease_id=${leaseA.id}&type=allocation.released&node_id=gpu-a`);
      const found = events.body.events.find((e: { node_id: string }) => e.node_id === NODES[0]!.uuid);
      if (found) {
        releasedAt = found.at;
        break;
      }
      await t.clock.advance(1_000);
    }
    expect(Date.parse(releasedAt)).toBeGreaterThan(T0 + 7 * H);
    await t.clock.advanceTo(new Date(T0 + 9 * H));
    const geoUse = await usage(geo.token, `${DAY}&group_by=node`);
    const lateStart = (T0 + 8 * H + 10 * 60_000 - Date.parse(releasedAt)) / 1000;
    expect(seconds(geoUse)).toEqual({ 'cpu-a': 3.5 * 3600, 'gpu-a': lateStart });
    expect(geoUse.total).toMatchObject({ node_seconds: 3.5 * 3600 + lateStart, allocations: 2 });
  });

  it('the lessee sees its early-ended, extended and replaced allocations exactly, with charges per currency never summed', async () => {
    const body = await usage(astro.token, `${DAY}&group_by=project`);
    expect(body.groups).toEqual([
      { key: astro.projectId, name: 'astro', node_seconds: 36_000, node_hours: 10, allocations: 3, charges: [{ currency: 'EUR', amount: '12.50' }, { currency: 'USD', amount: '3.00' }] },
    ]);
    // Per day: the chart's stacks add up to the same 10 node-hours, all on the first day.
    expect(body.days[0]).toEqual({ date: '2030-01-01', node_hours: { [astro.projectId]: 10 } });
  });

  it('a window clips each allocation to it', async () => {
    const body = await usage(astro.token, `from=${at(3 * H)}&to=${at(5 * H)}&group_by=node`);
    expect(seconds(body)).toEqual({ 'gpu-a': 7200, 'gpu-c': 7200 });
    expect(body.total).toMatchObject({ node_seconds: 14_400, allocations: 2, charges: [{ currency: 'EUR', amount: '5.00' }] });
  });

  it("the owner sees every lessee's use of its nodes; a lessee asking about the owner's nodes sees nothing", async () => {
    const lateStart = (T0 + 8 * H + 10 * 60_000 - Date.parse(releasedAt)) / 1000;
    const owned = await usage(owner.token, `${DAY}&owner=physics-lab`);
    expect(seconds(owned)).toEqual({ astro: 36_000, geo: 3.5 * 3600 + lateStart });
    expect((await usage(geo.token, `${DAY}&owner=physics-lab`)).groups).toEqual([]);
    expect((await usage(geo.token, `${DAY}&project=astro`)).groups).toEqual([]);
    expect((await usage(owner.token, DAY)).groups).toEqual([]); // the owner leased nothing itself
    const all = await usage(ADMIN_TOKEN, `${DAY}&group_by=owner`);
    expect(all.groups).toMatchObject([{ name: 'physics-lab', node_seconds: 36_000 + 3.5 * 3600 + lateStart, allocations: 5 }]);
  });

  it('CSV has one line per group and currency', async () => {
    const res = await t.app.request(`/v1/usage?${DAY}&group_by=node`, { headers: { Authorization: `Bearer ${astro.token}`, Accept: 'text/csv' } });
    expect(res.headers.get('content-type')).toContain('text/csv');
    const lines = (await res.text()).trim().split('\r\n');
    expect(lines).toEqual([
      'group_by,key,name,node_hours,node_seconds,allocations,currency,charge',
      `node,${NODES[0]!.uuid},gpu-a,5,18000,1,EUR,12.50`,
      `node,${NODES[2]!.uuid},gpu-c,4,14400,1,,`,
      `node,${NODES[1]!.uuid},gpu-b,1,3600,1,USD,3.00`,
    ]);
  });
});
