import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createProjectUser, startApp, type TestApp } from '../support/test-app.js';

const GiB = 1024;
const node = (n: number, name: string, memory_gib: number, gpus: number, owner = 'physics-lab', traits: string[] = []) => ({
  uuid: `1e5e0000-0000-4000-8000-00000000000${n}`,
  name,
  owner,
  properties: { memory_mb: memory_gib * GiB, cpus: 16, local_gb: 480, cpu_arch: 'x86_64', gpus },
  traits,
});
const NODES = [
  node(1, 'gpu-a', 64, 1, 'physics-lab', ['CUSTOM_A100']),
  node(2, 'gpu-b', 64, 1, 'physics-lab', ['CUSTOM_A100']),
  node(3, 'gpu-c', 96, 1, 'physics-lab', ['CUSTOM_A100']),
  node(4, 'gpu-huge', 512, 8, 'physics-lab', ['CUSTOM_A100']),
  node(5, 'cpu-a', 32, 0),
];

let t: TestApp;
let lessee: { projectId: string; token: string };
let reader: { projectId: string; token: string };
let other: { projectId: string; token: string };

beforeAll(async () => {
  t = await startApp({ nodes: NODES });
  const owner = await createProjectUser(t, 'physics-lab', 'member');
  lessee = await createProjectUser(t, 'astro', 'member');
  reader = await createProjectUser(t, 'astro', 'reader');
  other = await createProjectUser(t, 'geo', 'member');
  for (const n of NODES) expect((await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: n.name } })).status).toBe(201);
});
afterAll(async () => {
  await t.close();
});
// Each story starts from a free pool: its leases ended, and the clock past their cleaning gap (10 minutes).
const made: Array<{ id: string; token: string }> = [];
afterEach(async () => {
  for (const l of made.splice(0)) {
    const res = await t.request('DELETE', `/v1/leases/${l.id}`, { token: l.token });
    expect([200, 409], JSON.stringify(res.body)).toContain(res.status);
  }
  await t.clock.advance(15 * 60_000);
});

const lease = async (body: Record<string, unknown>, token = lessee.token) => {
  const res = await t.request('POST', '/v1/leases', { token, body: { duration: '1d', ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  made.push({ id: res.body.id, token });
  return res.body;
};
const names = (l: { allocations: Array<{ node_name: string; leave_reason: string | null }> }) =>
  l.allocations.filter((a) => a.leave_reason === null).map((a) => a.node_name).sort();

describe("a lease's nodes while it runs", () => {
  it('a lessee asks for another node: the best-fit equivalent takes its place at once, and the old one is out of reach at once', async () => {
    const l = await lease({ groups: [{ count: 1, where: 'gpus >= 1 and memory >= 48GiB' }], replace: 'ask' });
    expect(l.replace_policy).toBe('ask');
    expect(names(l)).toEqual(['gpu-a']);
    const res = await t.request('POST', `/v1/leases/${l.id}/allocations/gpu-a/replace`, { token: lessee.token, body: { reason: 'its NIC drops packets' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(names(res.body)).toEqual(['gpu-b']);
    const old = res.body.allocations.find((a: { node_name: string }) => a.node_name === 'gpu-a');
    const fresh = res.body.allocations.find((a: { node_name: string }) => a.node_name === 'gpu-b');
    expect(old).toMatchObject({ leave_reason: 'replaced', end: t.clock.now().toISOString() });
    expect(fresh).toMatchObject({ replaces: old.node_id, state: 'reserved', start: t.clock.now().toISOString(), end: l.end });
    expect((await t.request('GET', '/v1/nodes/gpu-a', { token: lessee.token })).status).toBe(404);
    expect((await t.request('GET', '/v1/nodes/gpu-b', { token: lessee.token })).status).toBe(200);
    const events = await t.request('GET', `/v1/events?lease_id=${l.id}&type=lease.node_replaced`, { token: lessee.token });
    expect(events.body.events[0]).toMatchObject({ node_id: old.node_id, details: { replacement: fresh.node_id, kind: 'requested' } });
    expect(events.body.events[0].message).toContain('its NIC drops packets');
  });

  it('without an equivalent node free for the rest of the lease, the answer is 409 saying why and the lease keeps its node', async () => {
    // Every other node with a GPU, 96 GiB or more and the trait is taken by another project.
    await lease({ nodes: ['gpu-huge'] }, other.token);
    const l = await lease({ nodes: ['gpu-c'] });
    const res = await t.request('POST', `/v1/leases/${l.id}/allocations/gpu-c/replace`, { token: lessee.token });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('lease_unavailable');
    expect(res.body.error.message).toContain('no equivalent node is free and allowed for the rest of the lease');
    const after = await t.request('GET', `/v1/leases/${l.id}`, { token: lessee.token });
    expect(names(after.body)).toEqual(['gpu-c']);
    expect(after.body.allocations[0].failure).toContain('asked for another node');
  });

  it('a named node is replaced by one with at least its facts and traits, the smallest such', async () => {
    const l = await lease({ nodes: ['cpu-a'] });
    const res = await t.request('POST', `/v1/leases/${l.id}/allocations/cpu-a/replace`, { token: lessee.token });
    // cpu-a has 32 GiB, 16 CPUs, 480 GB, no GPU, no trait: every free node has at least that; the smallest wins
    // (gpu-a: one GPU and 64 GiB), never the 512 GiB one.
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(names(res.body)).toEqual(['gpu-a']);
  });

  it('giving one node back ends it now and the rest of the lease goes on; giving back the last node ends the lease', async () => {
    const l = await lease({ groups: [{ count: 2, where: 'gpus >= 1' }] }, other.token);
    const [first, second] = l.allocations.map((a: { node_name: string }) => a.node_name);
    await t.clock.advance(60_000); // a lease that has run a minute
    const res = await t.request('DELETE', `/v1/leases/${l.id}/allocations/${first}`, { token: other.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(names(res.body)).toEqual([second]);
    expect(res.body.state).toBe('pending');
    expect(res.body.end).toBe(l.end);
    expect((await t.request('GET', `/v1/nodes/${first}`, { token: other.token })).status).toBe(404);
    const last = await t.request('DELETE', `/v1/leases/${l.id}/allocations/${second}`, { token: other.token });
    expect(last.status).toBe(200);
    expect(last.body.end).toBe(t.clock.now().toISOString());
    expect(last.body.state).toBe('ending'); // what it leads to, not the state it had a moment ago
    expect((await t.request('GET', `/v1/nodes/${second}`, { token: other.token })).status).toBe(404);
  });

  it('bad requests change nothing: a node not in the lease, a reader, another project, a node already gone', async () => {
    const l = await lease({ groups: [{ count: 1, where: 'gpus >= 1' }] });
    const held = l.allocations[0].node_name;
    const notIn = await t.request('DELETE', `/v1/leases/${l.id}/allocations/cpu-a`, { token: lessee.token });
    expect(notIn.status).toBe(404);
    expect(notIn.body.error.details.hint).toContain('is not (or no longer) in lease');
    expect((await t.request('DELETE', `/v1/leases/${l.id}/allocations/${held}`, { token: reader.token })).status).toBe(403);
    expect((await t.request('POST', `/v1/leases/${l.id}/allocations/${held}/replace`, { token: other.token })).status).toBe(404);
    expect((await t.request('POST', `/v1/leases/${l.id}/allocations/${held}/replace`, { token: lessee.token, body: { reason: 'x', extra: 1 } })).status).toBe(400);
    expect(names((await t.request('GET', `/v1/leases/${l.id}`, { token: lessee.token })).body)).toEqual([held]);
  });

  it('the replace policy is set at creation and changed later, each change an event', async () => {
    const l = await lease({ groups: [{ count: 1, where: 'gpus >= 1' }] });
    expect(l.replace_policy).toBe('auto');
    const res = await t.request('PATCH', `/v1/leases/${l.id}`, { token: lessee.token, body: { replace: 'never' } });
    expect(res.status).toBe(200);
    expect(res.body.replace_policy).toBe('never');
    expect((await t.request('PATCH', `/v1/leases/${l.id}`, { token: lessee.token, body: { replace: 'sometimes' } })).status).toBe(400);
    expect((await t.request('PATCH', `/v1/leases/${l.id}`, { token: lessee.token, body: {} })).status).toBe(400);
    const events = await t.request('GET', `/v1/events?lease_id=${l.id}&type=lease.replace_policy_changed`, { token: lessee.token });
    expect(events.body.events[0].details).toEqual({ from: 'auto', to: 'never' });
  });
});

describe("an owner's reclaim", () => {
  it('with notice, a running lease is told and gets an equivalent node from the reclaim instant; the node leaves the pool then', async () => {
    const owner = await createProjectUser(t, 'physics-lab', 'member', 'physics-lab-reclaimer');
    const offers = (await t.request('GET', '/v1/offers?node_id=gpu-b', { token: owner.token })).body.offers;
    await t.request('DELETE', `/v1/offers/${offers[0].id}`, { token: owner.token });
    expect((await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'gpu-b', reclaim_notice: 'P1D' } })).body.reclaim_notice).toBe('P1D');
    const l = await lease({ nodes: ['gpu-b'], duration: '7d' });
    const soon = new Date(t.clock.now().getTime() + 3_600_000).toISOString();
    const tooSoon = await t.request('POST', '/v1/nodes/gpu-b/reclaim', { token: owner.token, body: { at: soon } });
    expect(tooSoon.status).toBe(409);
    expect(tooSoon.body.error).toMatchObject({ code: 'policy_violation', details: { rule: 'reclaim_notice', lease_id: l.id } });
    expect(names((await t.request('GET', `/v1/leases/${l.id}`, { token: lessee.token })).body)).toEqual(['gpu-b']);

    const at = new Date(t.clock.now().getTime() + 2 * 86_400_000).toISOString();
    const res = await t.request('POST', '/v1/nodes/gpu-b/reclaim', { token: owner.token, body: { at } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.leases).toEqual([{ lease_id: l.id, substitute: expect.any(String) }]);
    const after = (await t.request('GET', `/v1/leases/${l.id}`, { token: lessee.token })).body;
    expect(after.allocations.find((a: { node_name: string }) => a.node_name === 'gpu-b')).toMatchObject({ leave_reason: 'replaced', end: at });
    expect(after.allocations.find((a: { replaces: string | null }) => a.replaces !== null)).toMatchObject({ start: at, end: l.end });
    const told = await t.request('GET', `/v1/events?lease_id=${l.id}&type=lease.reclaim_scheduled`, { token: lessee.token });
    expect(told.body.events).toHaveLength(1);
    const offer = (await t.request('GET', '/v1/offers?node_id=gpu-b', { token: owner.token })).body.offers.find((o: { status: string }) => o.status !== 'withdrawn');
    expect(offer.end).toBe(at);
  });

  it('without a reclaim notice on the offer, a lease keeps its node to its end, and the lessee cannot reclaim', async () => {
    const owner = await createProjectUser(t, 'physics-lab', 'member', 'physics-lab-reclaimer-2');
    const l = await lease({ nodes: ['gpu-c'], duration: '7d' });
    const at = new Date(t.clock.now().getTime() + 3 * 86_400_000).toISOString();
    const res = await t.request('POST', '/v1/nodes/gpu-c/reclaim', { token: owner.token, body: { at } });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toContain('without a reclaim notice: it keeps the node to its end');
    expect((await t.request('POST', '/v1/nodes/gpu-c/reclaim', { token: lessee.token, body: { at } })).status).toBe(403);
    expect(names((await t.request('GET', `/v1/leases/${l.id}`, { token: lessee.token })).body)).toEqual(['gpu-c']);
  });
});

describe('an owner withdraws an offer', () => {
  const withdraw = async (node: string) => {
    const owner = await createProjectUser(t, 'physics-lab', 'member', `physics-lab-withdraws-${node}`);
    const offers = (await t.request('GET', `/v1/offers?node_id=${node}&status=active`, { token: owner.token })).body.offers;
    for (const o of offers) expect((await t.request('DELETE', `/v1/offers/${o.id}`, { token: owner.token })).status).toBe(204);
  };
  const events = async (id: string, type: string) => (await t.request('GET', `/v1/events?lease_id=${id}&type=${type}`, { token: lessee.token })).body.events;

  it('an upcoming lease under replace: auto moves to an equivalent node; the node it had is free again', async () => {
    const start = new Date(t.clock.now().getTime() + 86_400_000).toISOString();
    const l = await lease({ nodes: ['gpu-a'], start, duration: '12h' });
    await withdraw('gpu-a');
    const after = (await t.request('GET', `/v1/leases/${l.id}`, { token: lessee.token })).body;
    const [substitute] = names(after);
    expect(substitute).toMatch(/^gpu-[bc]$/);
    expect(after.allocations.find((a: { replaces: string | null }) => a.replaces !== null)).toMatchObject({ start, end: l.end, state: 'reserved' });
    expect((await events(l.id, 'lease.node_replaced'))[0]).toMatchObject({ details: { kind: 'offer_withdrawn' } });
  });

  it('a running lease keeps the node; an upcoming one keeps it under replace: never, or with no equivalent free, and is told', async () => {
    const running = await lease({ nodes: ['gpu-huge'], duration: '1h' });
    const later = new Date(t.clock.now().getTime() + 86_400_000).toISOString();
    const never = await lease({ nodes: ['cpu-a'], start: later, replace: 'never' });
    const none = await lease({ nodes: ['gpu-huge'], start: later });
    await withdraw('gpu-huge');
    await withdraw('cpu-a');
    for (const [l, node] of [[running, 'gpu-huge'], [never, 'cpu-a'], [none, 'gpu-huge']] as const) {
      const after = (await t.request('GET', `/v1/leases/${l.id}`, { token: lessee.token })).body;
      expect(names(after)).toEqual([node]);
      expect(after.allocations[0].failure).toBeNull();
    }
    expect(await events(running.id, 'lease.offer_withdrawn')).toEqual([]);
    expect((await events(never.id, 'lease.offer_withdrawn'))[0].message).toContain('the lease keeps it as booked');
    expect((await events(none.id, 'lease.offer_withdrawn'))[0].message).toContain('no equivalent node is free');
    expect(await events(none.id, 'lease.degraded')).toEqual([]);
  });
});
