import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjectUser, startApp, type TestApp } from '../support/test-app.js';

// The monthly node-hour budget (one check for quote, create and extend), offer prices, and what /v1/usage refuses.
const node = (n: number, name: string) => ({
  uuid: `b0d9e700-0000-4000-8000-00000000000${n}`,
  name,
  owner: 'hw-lab',
  properties: { memory_mb: 65536, cpus: 16, local_gb: 480, cpu_arch: 'x86_64', gpus: 1 },
});
const NODES = [node(1, 'n-1'), node(2, 'n-2'), node(3, 'n-3')];
const H = 3_600_000;
// The manual clock starts at 2030-01-01T00:00:00Z.
const T0 = Date.parse('2030-01-01T00:00:00Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

let t: TestApp;
let owner: { projectId: string; token: string };
let budget: { projectId: string; token: string };

beforeAll(async () => {
  t = await startApp({ nodes: NODES });
  owner = await createProjectUser(t, 'hw-lab', 'member');
  budget = await createProjectUser(t, 'budget', 'member');
  for (const n of NODES) expect((await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: n.name } })).status).toBe(201);
  const set = await t.request('PATCH', '/v1/projects/budget', { body: { quota: { max_node_hours: 10 } } });
  expect(set.status, JSON.stringify(set.body)).toBe(200);
  expect(set.body.quota).toMatchObject({ max_node_hours: 10, max_nodes: null });
});
afterAll(async () => {
  await t.close();
});

describe('the monthly node-hour budget', () => {
  let first: { id: string };

  it('a lease within the month budget is booked; one that would pass it is refused the same way by quote and create, naming what remains', async () => {
    const ok = await t.request('POST', '/v1/leases', { token: budget.token, body: { nodes: ['n-1', 'n-2'], start: at(H), end: at(5 * H) } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    first = ok.body;
    const ask = { nodes: ['n-3'], start: at(H), end: at(4 * H) };
    for (const path of ['/v1/leases/quote', '/v1/leases']) {
      const res = await t.request('POST', path, { token: budget.token, body: ask });
      expect(res.status, path).toBe(409);
      expect(res.body.error).toMatchObject({
        code: 'policy_violation',
        details: { rule: 'quota.max_node_hours', max_node_hours: 10, month: '2030-01', booked_node_hours: 8, requested_node_hours: 3, remaining_node_hours: 2 },
      });
      expect(res.body.error.message).toContain('2 remain');
    }
    expect((await t.request('POST', '/v1/leases/quote', { token: budget.token, body: { ...ask, end: at(3 * H) } })).status).toBe(200);
  });

  it('an extension past the budget is refused and changes nothing; one within it goes through', async () => {
    const refused = await t.request('PATCH', `/v1/leases/${first.id}`, { token: budget.token, body: { end: at(7 * H) } });
    expect(refused.status).toBe(409);
    expect(refused.body.error.details).toMatchObject({ rule: 'quota.max_node_hours', booked_node_hours: 0, requested_node_hours: 12, remaining_node_hours: 10 });
    expect((await t.request('GET', `/v1/leases/${first.id}`, { token: budget.token })).body.end).toBe(at(5 * H));
    expect((await t.request('PATCH', `/v1/leases/${first.id}`, { token: budget.token, body: { end: at(6 * H) } })).status).toBe(200);
  });

  it('the budget is per calendar month (UTC): a lease crossing into February counts each part in its own month', async () => {
    const feb = Date.parse('2030-02-01T00:00:00Z') - T0;
    // 2 nodes × 1 h in January would pass January's 10 (already 10 booked); in February the month is empty.
    const crossing = await t.request('POST', '/v1/leases/quote', { token: budget.token, body: { nodes: ['n-3'], start: at(feb - H), end: at(feb + 9 * H) } });
    expect(crossing.status).toBe(409);
    expect(crossing.body.error.details).toMatchObject({ month: '2030-01', remaining_node_hours: 0 });
    expect((await t.request('POST', '/v1/leases/quote', { token: budget.token, body: { nodes: ['n-3'], start: at(feb), end: at(feb + 10 * H) } })).status).toBe(200);
    expect((await t.request('POST', '/v1/leases/quote', { token: budget.token, body: { nodes: ['n-3'], start: at(feb), end: at(feb + 11 * H) } })).body.error.details).toMatchObject({ month: '2030-02' });
  });

  it('null removes the budget', async () => {
    expect((await t.request('PATCH', '/v1/projects/budget', { body: { quota: { max_node_hours: null } } })).body.quota.max_node_hours).toBeNull();
    expect((await t.request('POST', '/v1/leases/quote', { token: budget.token, body: { nodes: ['n-3'], start: at(H), end: at(4 * H) } })).status).toBe(200);
  });
});

describe('offer prices and what /v1/usage refuses', () => {
  it('a price needs its currency and an ISO 4217 code; a bad one is a 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ price_per_node_hour: '2.50' }, 'currency'],
      [{ currency: 'EUR' }, 'price_per_node_hour'],
      [{ price_per_node_hour: '2.50', currency: 'eur' }, 'currency'],
      [{ price_per_node_hour: '-1', currency: 'EUR' }, 'price_per_node_hour'],
      [{ price_per_node_hour: '1.23456', currency: 'EUR' }, 'price_per_node_hour'],
    ];
    for (const [extra, field] of cases) {
      const res = await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'n-1', start: at(400 * H), ...extra } });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(JSON.stringify(res.body.error), JSON.stringify(extra)).toContain(field);
    }
  });

  it('bad windows and groupings are 400s naming the field', async () => {
    const cases: Array<[string, string]> = [
      [`from=${at(0)}&to=${at(0)}`, 'to'],
      [`from=${at(0)}&to=${at(367 * 24 * H)}`, 'to'],
      ['group_by=lessee', 'group_by'],
      ['from=yesterday', 'from'],
      ['format=xml', 'format'],
      ['from=9999-12-15T00:00:00Z', 'from'],
    ];
    for (const [query, field] of cases) {
      const res = await t.request('GET', `/v1/usage?${query}`, { token: budget.token });
      expect(res.status, query).toBe(400);
      expect(JSON.stringify(res.body.error), query).toContain(field);
    }
  });

  it('without from and to the report covers the current calendar month', async () => {
    const res = await t.request('GET', '/v1/usage', { token: budget.token });
    expect(res.body).toMatchObject({ from: '2030-01-01T00:00:00.000Z', to: '2030-02-01T00:00:00.000Z', group_by: 'project' });
    expect(res.body.days).toHaveLength(31);
  });
});
