import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjectUser, startTestApp, type TestApp } from '../support/test-app.js';

/**
 * The operator leasing for a project (`project` on POST /v1/leases and /v1/leases/quote, issue 17): the lease is
 * that project's in every way — quota, offers' allow-lists —, the audit log names the operator; nobody else may
 * name another project. And the lease list's `order`, and the hardware facts on offers.
 */
const node = (n: number, name: string, memoryGib: number, gpus: number) => ({
  uuid: `0be00000-0000-4000-8000-00000000000${n}`,
  name,
  owner: 'owners',
  properties: { memory_mb: memoryGib * 1024, cpus: 16, local_gb: 480, cpu_arch: 'x86_64', gpus },
});
const SEED = [node(1, 'op-a', 64, 1), node(2, 'op-b', 64, 1), node(3, 'op-geo-only', 32, 0)];
const H = 3_600_000;

let t: TestApp;
let astro: { projectId: string; token: string };
let geo: { projectId: string; token: string };

const leaseCount = async () => (await t.request('GET', '/v1/leases?limit=1000')).body.leases.length as number;

beforeAll(async () => {
  t = await startTestApp(SEED);
  const owners = await createProjectUser(t, 'owners', 'member');
  astro = await createProjectUser(t, 'astro', 'member');
  geo = await createProjectUser(t, 'geo', 'member');
  for (const n of ['op-a', 'op-b']) {
    expect((await t.request('POST', '/v1/offers', { token: owners.token, body: { node_id: n } })).status).toBe(201);
  }
  const restricted = await t.request('POST', '/v1/offers', { token: owners.token, body: { node_id: 'op-geo-only', allowed_projects: ['geo'] } });
  expect(restricted.status).toBe(201);
  expect((await t.request('PATCH', '/v1/projects/astro', { body: { quota: { max_nodes: 1 } } })).status).toBe(200);
});
afterAll(() => t.close());

describe('the operator leasing for a project', () => {
  it("books a lease that is the project's: its members see and end it, and the audit log names the operator as the actor", async () => {
    const res = await t.request('POST', '/v1/leases', { body: { project: 'astro', nodes: ['op-a'], duration: '1h', name: 'for-astro' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ project_id: astro.projectId, project_name: 'astro', name: 'for-astro' });
    const seen = await t.request('GET', `/v1/leases/${res.body.id}`, { token: astro.token });
    expect(seen.status).toBe(200);
    expect((await t.request('GET', `/v1/leases/${res.body.id}`, { token: geo.token })).status).toBe(404);
    const events = await t.request('GET', `/v1/events?lease_id=${res.body.id}&type=lease.created`, { token: astro.token });
    expect(events.body.events).toEqual([expect.objectContaining({ type: 'lease.created', actor: 'admin', project_id: astro.projectId })]);
    const ended = await t.request('DELETE', `/v1/leases/${res.body.id}`, { token: astro.token });
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
  });

  it('names the project by id as well as by name, for a quote too', async () => {
    const quote = await t.request('POST', '/v1/leases/quote', { body: { project: geo.projectId, nodes: ['op-geo-only'], duration: '1h' } });
    expect(quote.status, JSON.stringify(quote.body)).toBe(200);
    expect(quote.body.allocations).toMatchObject([{ node_name: 'op-geo-only' }]);
  });

  it("is held to the project's quota and its offers' allow-lists, exactly as the project's members are", async () => {
    const before = await leaseCount();
    const start = new Date(t.clock.now().getTime() + 5 * H).toISOString();
    const two = { project: 'astro', groups: [{ count: 2, where: 'gpus >= 1' }], duration: '1h', start };
    for (const path of ['/v1/leases/quote', '/v1/leases']) {
      const byOperator = await t.request('POST', path, { body: two });
      const byMember = await t.request('POST', path, { token: astro.token, body: { ...two, project: undefined } });
      expect(byOperator.status, JSON.stringify(byOperator.body)).toBe(409);
      expect(byOperator.body.error).toMatchObject({ code: 'policy_violation' });
      expect(byOperator.body.error).toEqual(byMember.body.error);
    }
    // Offered to geo only: astro does not know of the node, whoever asks for it.
    const hidden = await t.request('POST', '/v1/leases', { body: { project: 'astro', nodes: ['op-geo-only'], duration: '1h', start } });
    expect(hidden.status).toBe(400);
    expect(hidden.body.error.message).toContain('no node "op-geo-only" is known');
    expect(await leaseCount()).toBe(before);
  });

  it('an operator that names no project is told to name one (403), and an unknown project is a 400 on the field', async () => {
    const none = await t.request('POST', '/v1/leases', { body: { nodes: ['op-b'], duration: '1h' } });
    expect(none.status).toBe(403);
    expect(none.body.error).toMatchObject({ code: 'forbidden', details: { field: 'project' } });
    expect(none.body.error.message).toContain('--project');
    const unknown = await t.request('POST', '/v1/leases/quote', { body: { project: 'no-such-project', nodes: ['op-b'], duration: '1h' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'project' } });
  });
});

describe('anyone else naming a project', () => {
  it('a member naming another project, known or not, gets 403 in the one error shape and nothing is booked', async () => {
    const before = await leaseCount();
    for (const project of ['geo', geo.projectId, 'no-such-project']) {
      for (const path of ['/v1/leases', '/v1/leases/quote']) {
        const res = await t.request('POST', path, { token: astro.token, body: { project, nodes: ['op-b'], duration: '1h' } });
        expect(res.status, `${path} ${project}`).toBe(403);
        expect(res.body).toEqual({ error: { code: 'forbidden', message: expect.stringContaining('only an operator'), details: { field: 'project' } } });
      }
    }
    expect(await leaseCount()).toBe(before);
  });

  it('a member naming its own project leases as without it; a reader of that project still cannot', async () => {
    const own = await t.request('POST', '/v1/leases/quote', { token: astro.token, body: { project: 'astro', nodes: ['op-b'], duration: '1h' } });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    const reader = await createProjectUser(t, 'astro', 'reader', 'astro-reader');
    const refused = await t.request('POST', '/v1/leases', { token: reader.token, body: { project: 'astro', nodes: ['op-b'], duration: '1h' } });
    expect(refused.status).toBe(403);
  });
});

describe('the lease list order', () => {
  it('order=newest lists the most recently created first, and its next link keeps that order across pages', async () => {
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      await t.clock.advance(60_000);
      const res = await t.request('POST', '/v1/leases', { token: geo.token, body: { nodes: ['op-geo-only'], start: new Date(t.clock.now().getTime() + (2 + i * 3) * H).toISOString(), duration: '1h', name: `geo-${i}` } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      made.push(res.body.name);
    }
    const byStart = await t.request('GET', '/v1/leases', { token: geo.token });
    expect(byStart.body.leases.map((l: { name: string }) => l.name)).toEqual(made);
    const names: string[] = [];
    let next: string | null = '/v1/leases?order=newest&limit=2';
    while (next) {
      const page = await t.request('GET', next, { token: geo.token });
      expect(page.status).toBe(200);
      names.push(...page.body.leases.map((l: { name: string }) => l.name));
      next = page.body.next;
    }
    expect(names).toEqual([...made].reverse());
    const bad = await t.request('GET', '/v1/leases?order=oldest', { token: geo.token });
    expect(bad.status).toBe(400);
  });
});

describe('offers', () => {
  it("carry the node's hardware facts, as GET /v1/nodes gives them", async () => {
    const res = await t.request('GET', '/v1/offers?node_id=op-a', { token: astro.token });
    expect(res.body.offers[0].node_facts).toMatchObject({ memory: 64 * 2 ** 30, cpus: 16, gpus: 1, cpu_arch: 'x86_64', disk: 480 * 2 ** 30 });
  });

  it("show the node's facts and name as they are now: a change synced from Ironic is on the next list", async () => {
    const listed = async () => (await t.request('GET', '/v1/offers?node_id=op-b', { token: astro.token })).body.offers[0];
    expect((await listed()).node_facts).toMatchObject({ gpus: 1 });
    t.driver.updateProperties(SEED[1]!.uuid, { gpus: 4 });
    await t.inventory.syncAll();
    const after = await listed();
    expect(after).toMatchObject({ node_name: 'op-b', node_facts: { gpus: 4, memory: 64 * 2 ** 30 } });
    const node = await t.request('GET', '/v1/nodes/op-b');
    expect(after.node_facts).toEqual(node.body.facts);
    // Gone from Ironic (out of the planning index): its offer is still listed, with the name and facts it last had.
    t.driver.removeNode(SEED[1]!.uuid);
    await t.inventory.syncAll();
    const gone = await t.request('GET', '/v1/offers?limit=1000');
    expect(gone.body.offers.filter((o: { node_id: string }) => o.node_id === SEED[1]!.uuid)).toMatchObject([{ node_name: 'op-b', node_facts: { gpus: 4 } }]);
  });
});
