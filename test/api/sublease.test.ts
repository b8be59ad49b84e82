import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjectUser, startApp, type TestApp } from '../support/test-app.js';

const node = (n: number, name: string) => ({
  uuid: `5b1e0000-0000-4000-8000-00000000000${n}`,
  name,
  owner: 'physics-lab',
  properties: { memory_mb: 64 * 1024, cpus: 16, local_gb: 480, cpu_arch: 'x86_64', gpus: 1 },
  traits: [],
});
const H = 3_600_000;
// One node per story (no engine runs here: a node's earlier allocation stays unfinished, as if not yet cleaned).
const NAMES = ['sub-a', 'sub-b', 'sub-c', 'sub-d', 'sub-e', 'sub-f', 'sub-g'];

let t: TestApp;
let owner: { projectId: string; token: string };
let lessee: { projectId: string; token: string };
let lesseeReader: { projectId: string; token: string };
let sub: { projectId: string; token: string };
let third: { projectId: string; token: string };

beforeAll(async () => {
  t = await startApp({ nodes: NAMES.map((name, i) => node(i + 1, name)), logTo: process.env.LOG_TO ? (await import('node:fs')).createWriteStream(process.env.LOG_TO) : undefined });
  owner = await createProjectUser(t, 'physics-lab', 'member');
  lessee = await createProjectUser(t, 'astro', 'member');
  lesseeReader = await createProjectUser(t, 'astro', 'reader');
  sub = await createProjectUser(t, 'geo', 'member');
  third = await createProjectUser(t, 'bio', 'member');
  for (const name of NAMES) {
    // Offered to astro only: geo and bio can lease these nodes only through astro's sub-offers.
    const res = await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: name, allowed_projects: ['astro'] } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
});
afterAll(async () => {
  await t.close();
});

const iso = (ms: number) => new Date(t.clock.now().getTime() + ms).toISOString();
async function parentLease(nodeName: string, hours = 10) {
  const res = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: [nodeName], duration: `${hours}h` } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}
async function subOffer(nodeName: string, body: Record<string, unknown> = {}, token = lessee.token) {
  return t.request('POST', '/v1/offers', { token, body: { node_id: nodeName, allowed_projects: ['geo'], ...body } });
}
const eventsOf = async (leaseId: string, type: string) =>
  (await t.request('GET', `/v1/events?lease_id=${leaseId}&type=${type}`)).body.events as Array<{ details: Record<string, unknown>; project_id: string }>;

describe('sub-leasing, one level', () => {
  it("a lessee offers its leased node within its lease; the sub-lessee leases it and has it, the lessee loses access meanwhile, the owner sees the chain", async () => {
    const parent = await parentLease('sub-a');
    const offer = await subOffer('sub-a', { start: iso(H), end: iso(5 * H) });
    expect(offer.status, JSON.stringify(offer.body)).toBe(201);
    expect(offer.body).toMatchObject({ project_id: lessee.projectId, sublease_of: parent.id, start: iso(H), end: iso(5 * H) });
    expect(offer.body.free_windows).toEqual([{ start: iso(H), end: iso(5 * H) }]);

    const leased = await t.request('POST', '/v1/leases', { token: sub.token, body: { groups: [{ count: 1, where: 'gpus >= 1' }], start: iso(2 * H), duration: '2h' } });
    expect(leased.status, JSON.stringify(leased.body)).toBe(201);
    expect(leased.body.allocations[0]).toMatchObject({ node_name: 'sub-a', sublease_of: { lease_id: parent.id, project_id: lessee.projectId } });
    const [subleased] = await eventsOf(parent.id, 'lease.subleased');
    expect(subleased).toMatchObject({ project_id: lessee.projectId, details: { sublease_id: leased.body.id, sublessee: sub.projectId } });

    // Before the sub-lease: the lessee has its node, the sub-lessee not yet.
    expect((await t.request('GET', '/v1/nodes/sub-a', { token: lessee.token })).status).toBe(200);
    expect((await t.request('GET', '/v1/nodes/sub-a', { token: sub.token })).status).toBe(404);
    await t.clock.advance(2 * H);
    expect((await t.request('GET', '/v1/nodes/sub-a', { token: sub.token })).status).toBe(200);
    expect((await t.request('GET', '/v1/nodes/sub-a', { token: lessee.token })).status).toBe(404);
    const power = await t.request('POST', '/v1/nodes/sub-a/power', { token: lessee.token, body: { action: 'off' } });
    expect(power.status).toBe(404);

    const nodeSeen = await t.request('GET', '/v1/nodes/sub-a', { token: owner.token });
    expect(nodeSeen.body.lease).toMatchObject({ id: leased.body.id, project_id: sub.projectId, sublease_of: { lease_id: parent.id, project_name: 'astro' } });
    const seen = await t.request('GET', `/v1/leases/${parent.id}`, { token: owner.token });
    expect(seen.status).toBe(200);
    expect(seen.body.allocations[0].subleases).toEqual([
      expect.objectContaining({ lease_id: leased.body.id, project_id: sub.projectId, project_name: 'geo', start: iso(0), end: iso(2 * H) }),
    ]);
    // After the sub-lease the sub-lessee has lost the node at once; the lessee gets it back once the engine has
    // wiped it (test/engine/sublease.test.ts: no engine runs here), never with the sub-lessee's data on it.
    await t.clock.advance(2 * H);
    expect((await t.request('GET', '/v1/nodes/sub-a', { token: sub.token })).status).toBe(404);
    expect((await t.request('GET', '/v1/nodes/sub-a', { token: lessee.token })).status).toBe(404);
    // The sub-lessee used the node the two hours it had it (its parent's hold on it is no earlier holder).
    const used = await t.request('GET', `/v1/usage?from=${iso(-5 * H)}&to=${iso(H)}`, { token: sub.token });
    expect(used.status, JSON.stringify(used.body)).toBe(200);
    expect(used.body.total.node_seconds).toBe(2 * 3600);
    await t.request('DELETE', `/v1/leases/${parent.id}`, { token: lessee.token });
  });

  it('a sub-offer past the end of the lessee\'s lease on the node is refused naming the rule, and nothing is offered', async () => {
    const parent = await parentLease('sub-b', 4);
    const res = await subOffer('sub-b', { end: iso(6 * H) });
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'policy_violation', details: { rule: 'sublease_within_lease', allowed: { end: parent.end } } });
    expect(res.body.error.message).toContain('sublease_within_lease');
    const offers = await t.request('GET', '/v1/offers?node_id=sub-b', { token: lessee.token });
    expect(offers.body.offers.filter((o: { sublease_of: string | null }) => o.sublease_of !== null)).toEqual([]);
    await t.request('DELETE', `/v1/leases/${parent.id}`, { token: lessee.token });
  });

  it('a sub-lessee cannot offer the node on, and a reader of the lessee cannot sub-offer: each refusal names its rule', async () => {
    const parent = await parentLease('sub-c');
    expect((await subOffer('sub-c', {}, lesseeReader.token)).body.error).toMatchObject({ code: 'policy_violation', details: { rule: 'baremetal:node:sublease' } });
    expect((await subOffer('sub-c')).status).toBe(201);
    const leased = await t.request('POST', '/v1/leases', { token: sub.token, body: { nodes: ['sub-c'], duration: '1h' } });
    expect(leased.status, JSON.stringify(leased.body)).toBe(201);
    const again = await t.request('POST', '/v1/offers', { token: sub.token, body: { node_id: 'sub-c', allowed_projects: ['bio'] } });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'policy_violation', details: { rule: 'sublease_one_level' } });
    // Nobody else can lease the node from the sub-lessee: it was never offered to bio.
    const bio = await t.request('POST', '/v1/leases', { token: third.token, body: { nodes: ['sub-c'], duration: '1h' } });
    expect(bio.status).toBe(400);
    // Nor can its lessee extend the sub-lease past the lessee's own lease.
    const longer = await t.request('PATCH', `/v1/leases/${leased.body.id}`, { token: sub.token, body: { end: iso(12 * H) } });
    expect(longer.status).toBe(409);
    expect((await t.request('GET', `/v1/leases/${leased.body.id}`, { token: sub.token })).body.end).toBe(leased.body.end);
    expect((await t.request('PATCH', `/v1/leases/${leased.body.id}`, { token: sub.token, body: { end: iso(2 * H) } })).status).toBe(200);
    await t.request('DELETE', `/v1/leases/${leased.body.id}`, { token: sub.token });
    await t.request('DELETE', `/v1/leases/${parent.id}`, { token: lessee.token });
  });

  it('ending the parent lease ends the sub-lease at the same instant: the sub-lessee loses the node then, both lessees hear of it', async () => {
    await t.clock.advance(H);
    const parent = await parentLease('sub-d');
    expect((await subOffer('sub-d')).status).toBe(201);
    const leased = await t.request('POST', '/v1/leases', { token: sub.token, body: { nodes: ['sub-d'], duration: '5h' } });
    expect(leased.status, JSON.stringify(leased.body)).toBe(201);
    await t.clock.advance(H);
    expect((await t.request('GET', '/v1/nodes/sub-d', { token: sub.token })).status).toBe(200);

    const ended = await t.request('DELETE', `/v1/leases/${parent.id}`, { token: lessee.token });
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    const now = t.clock.now().toISOString();
    const after = await t.request('GET', `/v1/leases/${leased.body.id}`, { token: sub.token });
    expect(after.body.end).toBe(now);
    expect(after.body.allocations[0].end).toBe(now);
    expect((await t.request('GET', '/v1/nodes/sub-d', { token: sub.token })).status).toBe(404);
    expect((await eventsOf(leased.body.id, 'lease.sublease_ended'))[0]).toMatchObject({ project_id: sub.projectId, details: { parent_lease_id: parent.id, at: now } });
    expect((await eventsOf(parent.id, 'lease.sublease_ended'))[0]).toMatchObject({ project_id: lessee.projectId, details: { sublease_id: leased.body.id } });
  });

  it('shortening the parent lease cuts a sub-lease that ran past the new end, and cancels one that had not begun by then', async () => {
    await t.clock.advance(2 * H);
    const parent = await parentLease('sub-e');
    expect((await subOffer('sub-e')).status).toBe(201);
    const running = await t.request('POST', '/v1/leases', { token: sub.token, body: { nodes: ['sub-e'], duration: '3h' } });
    const later = await t.request('POST', '/v1/leases', { token: sub.token, body: { nodes: ['sub-e'], start: iso(6 * H), duration: '1h' } });
    expect([running.status, later.status], JSON.stringify(later.body)).toEqual([201, 201]);
    const cut = await t.request('PATCH', `/v1/leases/${parent.id}`, { token: lessee.token, body: { end: iso(2 * H) } });
    expect(cut.status, JSON.stringify(cut.body)).toBe(200);
    expect((await t.request('GET', `/v1/leases/${running.body.id}`, { token: sub.token })).body.end).toBe(iso(2 * H));
    expect((await t.request('GET', `/v1/leases/${later.body.id}`, { token: sub.token })).body.state).toBe('cancelled');
    await t.request('DELETE', `/v1/leases/${parent.id}`, { token: lessee.token });
  });

  it('giving the node back ends its sub-lease at once, while the rest of the parent lease goes on', async () => {
    await t.clock.advance(3 * H);
    const res = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['sub-f', 'sub-g'], duration: '10h' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect((await subOffer('sub-f')).status).toBe(201);
    const leased = await t.request('POST', '/v1/leases', { token: sub.token, body: { nodes: ['sub-f'], duration: '5h' } });
    expect(leased.status).toBe(201);
    await t.clock.advance(H);
    const back = await t.request('DELETE', `/v1/leases/${res.body.id}/allocations/sub-f`, { token: lessee.token });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect((await t.request('GET', `/v1/leases/${leased.body.id}`, { token: sub.token })).body.end).toBe(t.clock.now().toISOString());
    expect((await t.request('GET', '/v1/nodes/sub-f', { token: sub.token })).status).toBe(404);
    expect((await t.request('GET', '/v1/nodes/sub-g', { token: lessee.token })).status).toBe(200);
    await t.request('DELETE', `/v1/leases/${res.body.id}`, { token: lessee.token });
  });
});
