import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { peakHeld } from '../../src/domain/scheduling/quota.js';
import { createProjectUser, startTestApp, type TestApp } from '../support/test-app.js';

const HOUR = 3_600_000;
const node = (n: number, name: string, owner: string, properties: Record<string, unknown> = {}) => ({
  uuid: `9a07a000-0000-4000-8000-00000000000${n}`,
  name,
  owner,
  properties: { memory_mb: 65536, cpus: 16, local_gb: 480, cpu_arch: 'x86_64', gpus: 1, ...properties },
});
const NODES = [
  node(1, 'arm-01', 'hw-lab'),
  node(2, 'arm-02', 'hw-lab'),
  node(3, 'arm-03', 'hw-lab'),
  // Never offered: no lessee may learn they exist, nor what facts they have.
  node(4, 'secret-1', 'hidden-lab', { secret_sauce: 'yes' }),
  node(5, 'secret-2', 'hidden-lab', { secret_sauce: 'yes' }),
];

let t: TestApp;
let owner: { token: string };
let capped: { token: string };
const at = (ms: number) => new Date(t.clock.now().getTime() + ms).toISOString();

beforeAll(async () => {
  t = await startTestApp(NODES);
  owner = await createProjectUser(t, 'hw-lab', 'member');
  await createProjectUser(t, 'hidden-lab', 'member');
  capped = await createProjectUser(t, 'capped', 'member');
  await t.request('PATCH', '/v1/projects/capped', { body: { quota: { max_nodes: 1 } } });
  for (const name of ['arm-01', 'arm-02']) await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: name, max_lease_duration: '1d' } });
  await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'arm-03', max_lease_duration: '1h' } });
});
afterAll(async () => {
  await t.close();
});

describe('the node quota on every path that changes what a project holds', () => {
  it('an extension that would make a project hold two nodes at once under max_nodes 1 is refused and changes nothing', async () => {
    const first = await t.request('POST', '/v1/leases', { token: capped.token, body: { nodes: ['arm-01'], start: at(HOUR), end: at(2 * HOUR) } });
    const second = await t.request('POST', '/v1/leases', { token: capped.token, body: { nodes: ['arm-02'], start: at(3 * HOUR), end: at(4 * HOUR) } });
    expect([first.status, second.status]).toEqual([201, 201]);

    const extend = await t.request('PATCH', `/v1/leases/${first.body.id}`, { token: capped.token, body: { end: at(3.5 * HOUR) } });
    expect(extend.status).toBe(409);
    expect(extend.body.error).toMatchObject({ code: 'policy_violation', details: { rule: 'quota.max_nodes', max_nodes: 1, held: 1, requested: 1, at: at(3 * HOUR) } });
    expect(extend.body.error.message).toBe(
      `project quota: capped may hold at most 1 node at a time, and this asks for 1; it already holds 1 at ${at(3 * HOUR)}, within this window`,
    );
    expect((await t.request('GET', `/v1/leases/${first.body.id}`, { token: capped.token })).body.end).toBe(at(2 * HOUR));

    // Up to the other lease's start is fine: one lease after the other is one node at a time.
    const within = await t.request('PATCH', `/v1/leases/${first.body.id}`, { token: capped.token, body: { end: at(3 * HOUR) } });
    expect(within.status, JSON.stringify(within.body)).toBe(200);
    for (const id of [first.body.id, second.body.id]) await t.request('DELETE', `/v1/leases/${id}`, { token: capped.token });
  });

  it('a quote refuses what create refuses, with the same answer', async () => {
    const held = await t.request('POST', '/v1/leases', { token: capped.token, body: { nodes: ['arm-01'], start: at(HOUR), duration: '2h' } });
    expect(held.status).toBe(201);
    const body = { nodes: ['arm-02'], start: at(2 * HOUR), duration: '2h' };
    const quote = await t.request('POST', '/v1/leases/quote', { token: capped.token, body });
    const create = await t.request('POST', '/v1/leases', { token: capped.token, body });
    expect(quote.status).toBe(409);
    expect(create.status).toBe(409);
    expect(quote.body).toEqual(create.body);
    expect(quote.body.error.details).toMatchObject({ rule: 'quota.max_nodes', held: 1 });
    // After it, it fits: both say so.
    const later = { nodes: ['arm-02'], start: at(3 * HOUR), duration: '1h' };
    expect((await t.request('POST', '/v1/leases/quote', { token: capped.token, body: later })).status).toBe(200);
    await t.request('DELETE', `/v1/leases/${held.body.id}`, { token: capped.token });
  });

  it('the longest-lease quota is one check for quote, create and extension, naming the latest end allowed', async () => {
    await t.request('PATCH', '/v1/projects/capped', { body: { quota: { max_nodes: 1, max_lease_duration: '2h' } } });
    try {
      const lease = await t.request('POST', '/v1/leases', { token: capped.token, body: { nodes: ['arm-01'], start: at(HOUR), duration: '1h' } });
      expect(lease.status).toBe(201);
      const extend = await t.request('PATCH', `/v1/leases/${lease.body.id}`, { token: capped.token, body: { end: at(4 * HOUR) } });
      expect(extend.status).toBe(409);
      expect(extend.body.error.details).toMatchObject({ rule: 'quota.max_lease_duration', latest_end: at(3 * HOUR) });
      expect(extend.body.error.message).toContain(`the latest end allowed is ${at(3 * HOUR)}`);
      await t.request('DELETE', `/v1/leases/${lease.body.id}`, { token: capped.token });
    } finally {
      await t.request('PATCH', '/v1/projects/capped', { body: { quota: { max_nodes: 1, max_lease_duration: null } } });
    }
  });

  it('nodes held at once are counted at the busiest instant, not summed over the window', () => {
    const window = { start: 0, end: 10 };
    expect(peakHeld([{ start: 0, end: 3 }, { start: 3, end: 6 }, { start: 6, end: 10 }], window)).toEqual({ count: 1, at: 0 });
    expect(peakHeld([{ start: 0, end: 5 }, { start: 4, end: 8 }, { start: 7, end: 12 }], window)).toEqual({ count: 2, at: 4 });
    expect(peakHeld([{ start: -5, end: 0 }, { start: 10, end: 20 }], window)).toEqual({ count: 0, at: 0 });
  });
});

describe('a refused extension reads as a sentence', () => {
  it("names the node, the owner's rule and the latest end allowed", async () => {
    const lessee = await createProjectUser(t, 'ext-lab', 'member');
    const lease = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['arm-03'], start: at(HOUR), duration: '30m' } });
    expect(lease.status).toBe(201);
    const extend = await t.request('PATCH', `/v1/leases/${lease.body.id}`, { token: lessee.token, body: { end: at(3 * HOUR) } });
    expect(extend.status).toBe(409);
    expect(extend.body.error.message).toBe(
      `cannot extend to ${at(3 * HOUR)}: node arm-03 cannot be held that long (its offer allows at most PT1H); the latest end allowed is ${at(2 * HOUR)}`,
    );
    expect(extend.body.error.details).toMatchObject({ node_id: '9a07a000-0000-4000-8000-000000000003', latest_end: at(2 * HOUR) });
    await t.request('DELETE', `/v1/leases/${lease.body.id}`, { token: lessee.token });
  });
});

describe('a refusal tells a lessee only about nodes it may see', () => {
  it('counts only its own and offered nodes, and knows only their facts', async () => {
    const lessee = await createProjectUser(t, 'curious', 'member');
    const quote = await t.request('POST', '/v1/leases/quote', { token: lessee.token, body: { groups: [{ count: 4, where: 'gpus >= 1' }], duration: '1h' } });
    expect(quote.status).toBe(409);
    // 3 offered nodes match; the 2 hidden ones are neither counted nor named.
    expect(quote.body.error.message).toContain('3 match, 3 allowed, 3 free — short by 1');
    expect(JSON.stringify(quote.body)).not.toContain('secret');

    const fact = await t.request('POST', '/v1/leases/quote', { token: lessee.token, body: { groups: [{ count: 1, where: 'secret_sauce == "yes"' }], duration: '1h' } });
    expect(fact.status).toBe(400);
    expect(fact.body.error.message).toContain('unknown fact');
    expect(fact.body.error.details.known_facts).toContain('gpus');
    expect(fact.body.error.details.known_facts).not.toContain('secret_sauce');
    for (const path of ['/v1/nodes', '/v1/offers', '/v1/availability']) {
      const listed = await t.request('GET', `${path}?where=${encodeURIComponent('secret_sauce == "yes"')}`, { token: lessee.token });
      expect(listed.status, path).toBe(400);
      expect(listed.body.error.details.known_facts, path).not.toContain('secret_sauce');
    }
  });
});
