import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjectUser, startTestApp, type TestApp } from '../support/test-app.js';

// 2030-01-01, where the test clock starts, is a Tuesday.
const node = (n: number, name: string, gpus: number, owner: string | null) => ({
  uuid: `b01c0000-0000-4000-8000-00000000000${n}`,
  name,
  owner,
  properties: { memory_mb: 65536, cpus: 16, local_gb: 480, cpu_arch: 'x86_64', gpus },
});
const SEED = [node(1, 'n-1', 1, 'night-lab'), node(2, 'n-2', 2, 'night-lab'), node(3, 'n-3', 0, 'night-lab'), node(4, 'o-1', 1, 'other-lab'), node(5, 'u-1', 1, null)];
const NIGHTS_AND_WEEKENDS = ['mon-fri 18:00-08:00', 'sat-sun'];

let t: TestApp;
let owner: { projectId: string; token: string };
let reader: { token: string };
let otherOwner: { token: string };
let lessee: { projectId: string; token: string };

/** The offers of a node not withdrawn. */
const offersOf = async (name: string) =>
  ((await t.request('GET', `/v1/offers?node_id=${name}`)).body.offers as { id: string; status: string }[]).filter((o) => o.status !== 'withdrawn');

beforeAll(async () => {
  t = await startTestApp(SEED);
  owner = await createProjectUser(t, 'night-lab', 'member');
  reader = await createProjectUser(t, 'night-lab', 'reader');
  otherOwner = await createProjectUser(t, 'other-lab', 'member');
  lessee = await createProjectUser(t, 'astro', 'member');
  // o-1 is offered to every project, night-lab included: it knows the node but does not own it.
  expect((await t.request('POST', '/v1/offers', { token: otherOwner.token, body: { node_id: 'o-1' } })).status).toBe(201);
});
afterAll(async () => {
  await t.close();
});

describe('offering many nodes at once', () => {
  it("offers every node of the owner's that an expression matches, with weekly windows, and lists the offers made", async () => {
    const res = await t.request('POST', '/v1/offers', { token: owner.token, body: { where: 'gpus >= 1', weekly: NIGHTS_AND_WEEKENDS, max_lease_duration: 'P3D' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    // o-1 matches too, but is other-lab's: an expression selects among the caller's own nodes.
    expect(res.body.offers.map((o: { node_name: string }) => o.node_name).sort()).toEqual(['n-1', 'n-2']);
    expect(res.body.offers[0]).toMatchObject({
      weekly: ['mon-fri 18:00-08:00', 'sat-sun 00:00-24:00'],
      timezone: 'UTC',
      weekly_summary: 'Mon–Fri 18:00–08:00 (next day), Sat–Sun all day (UTC)',
      max_lease_duration: 'P3D',
      status: 'active',
    });
    // Free windows: inside the weekly windows only (Monday night runs into Tuesday 08:00), four weeks of them.
    expect(res.body.offers[0].free_windows.slice(0, 2)).toEqual([
      { start: '2030-01-01T00:00:00.000Z', end: '2030-01-01T08:00:00.000Z' },
      { start: '2030-01-01T18:00:00.000Z', end: '2030-01-02T08:00:00.000Z' },
    ]);
    expect(res.body.offers[0].free_windows.at(-1).end).toBe('2030-01-29T00:00:00.000Z');
    const events = await t.request('GET', '/v1/events?type=offer.created', { token: owner.token });
    expect(events.body.events.filter((e: { details: { batch?: number } }) => e.details.batch === 2)).toHaveLength(2);
  });

  it('refuses the whole list when any node cannot be offered, naming each node and why, and creates nothing', async () => {
    const res = await t.request('POST', '/v1/offers', { token: owner.token, body: { nodes: ['n-3', 'n-1', 'o-1', 'ghost'] } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('conflict');
    expect(res.body.error.message).toBe('3 of 4 nodes cannot be offered; nothing was offered');
    const byNode = Object.fromEntries(res.body.error.details.nodes.map((p: { node: string }) => [p.node, p]));
    expect(byNode['ghost']).toMatchObject({ node_id: null, node_name: null, code: 'not_found' });
    expect(byNode['o-1']).toMatchObject({ node_id: SEED[3]!.uuid, node_name: 'o-1', code: 'forbidden' });
    expect(byNode['n-1']).toMatchObject({ node_id: SEED[0]!.uuid, node_name: 'n-1', code: 'conflict' });
    expect(byNode['n-1'].message).toContain('overlapping');
    expect(await offersOf('n-3')).toEqual([]);
  });

  it('offers a list given by names and ids, each node once', async () => {
    const res = await t.request('POST', '/v1/offers', { token: owner.token, body: { nodes: ['n-3', SEED[2]!.uuid], end: '2030-02-01T00:00:00Z' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.offers).toHaveLength(1);
    expect(res.body.offers[0]).toMatchObject({ node_name: 'n-3', end: '2030-02-01T00:00:00.000Z', weekly: null, timezone: null, weekly_summary: null });
    expect((await t.request('DELETE', `/v1/offers/${res.body.offers[0].id}`, { token: owner.token })).status).toBe(204);
  });

  it("refuses an operator's list with a node that has no owner project, and an expression matching nothing with a 400", async () => {
    const res = await t.request('POST', '/v1/offers', { body: { nodes: ['u-1', 'n-3'] } });
    expect(res.status).toBe(409);
    expect(res.body.error.details.nodes).toEqual([
      { node: 'u-1', node_id: SEED[4]!.uuid, node_name: 'u-1', code: 'conflict', message: 'node u-1 has no owner project; the operator sets one first' },
    ]);
    const none = await t.request('POST', '/v1/offers', { token: owner.token, body: { where: 'gpus >= 100' } });
    expect(none.status).toBe(400);
    expect(none.body.error.details.field).toBe('where');
    expect(await offersOf('n-3')).toEqual([]);
  });

  it('asks for exactly one of node_id, nodes and where, at most 1,000 nodes, and a member', async () => {
    expect((await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'n-3', nodes: ['n-3'] } })).status).toBe(400);
    expect((await t.request('POST', '/v1/offers', { token: owner.token, body: { max_lease_duration: 'P1D' } })).status).toBe(400);
    expect((await t.request('POST', '/v1/offers', { token: owner.token, body: { nodes: [] } })).status).toBe(400);
    const many = Array.from({ length: 1001 }, (_, i) => `node-${i}`);
    expect((await t.request('POST', '/v1/offers', { token: owner.token, body: { nodes: many } })).status).toBe(400);
    expect((await t.request('POST', '/v1/offers', { token: reader.token, body: { nodes: ['n-3'] } })).status).toBe(403);
    expect(await offersOf('n-3')).toEqual([]);
  });
});

describe('weekly windows on an offer', () => {
  it('are checked at create: a bad rule, an unknown timezone, or a timezone alone is a 400 naming the field', async () => {
    const bad = async (body: object) => (await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'n-3', ...body } })).body.error;
    expect(await bad({ weekly: ['someday'] })).toMatchObject({ code: 'invalid_request', details: { field: 'weekly' } });
    expect(await bad({ weekly: ['mon 10:00-10:00'] })).toMatchObject({ details: { field: 'weekly' } });
    expect(await bad({ weekly: ['mon'], timezone: 'Mars/Base' })).toMatchObject({ details: { field: 'timezone' } });
    expect(await bad({ timezone: 'UTC' })).toMatchObject({ details: { field: 'timezone' } });
    expect(await offersOf('n-3')).toEqual([]);
  });

  it('follow their timezone: office hours in Berlin are 08:00-16:00Z in winter', async () => {
    const res = await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'n-3', weekly: ['mon-fri 09:00-17:00'], timezone: 'Europe/Berlin' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ weekly: ['mon-fri 09:00-17:00'], timezone: 'Europe/Berlin', weekly_summary: 'Mon–Fri 09:00–17:00 (Europe/Berlin)' });
    expect(res.body.free_windows[0]).toEqual({ start: '2030-01-01T08:00:00.000Z', end: '2030-01-01T16:00:00.000Z' });
    const shown = await t.request('GET', `/v1/offers/${res.body.id}`, { token: lessee.token });
    expect(shown.body.weekly).toEqual(['mon-fri 09:00-17:00']);
  });

  it('book a lease wholly inside a window, and refuse one outside with the next window that fits', async () => {
    const inside = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['n-1'], duration: 'PT4H' } });
    expect(inside.status, JSON.stringify(inside.body)).toBe(201);
    expect((await t.request('DELETE', `/v1/leases/${inside.body.id}`, { token: lessee.token })).status).toBe(200);

    const byDay = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['n-1'], start: '2030-01-01T10:00:00Z', duration: 'PT2H' } });
    expect(byDay.status).toBe(409);
    expect(byDay.body.error.details.earliest_start).toBe('2030-01-01T18:00:00.000Z');
    expect(JSON.stringify(byDay.body.error.details.groups)).toContain('weekly windows');

    // Too long for any weeknight (14 h): the weekend is the first window that holds it.
    const long = await t.request('POST', '/v1/leases/quote', { token: lessee.token, body: { groups: [{ count: 2, where: 'gpus >= 1 and memory >= 64GiB' }], duration: 'PT20H' } });
    expect(long.status).toBe(409);
    expect(long.body.error.details.earliest_start).toBe('2030-01-04T18:00:00.000Z');

    const weekend = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['n-2'], start: '2030-01-04T20:00:00Z', end: '2030-01-06T20:00:00Z' } });
    expect(weekend.status, JSON.stringify(weekend.body)).toBe(201);
    expect((await t.request('DELETE', `/v1/leases/${weekend.body.id}`, { token: lessee.token })).status).toBe(200);
  });

  it("refuse extending a lease past the end of its window, naming it, and allow up to it", async () => {
    const lease = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['n-1'], start: '2030-01-01T18:00:00Z', end: '2030-01-02T04:00:00Z' } });
    expect(lease.status, JSON.stringify(lease.body)).toBe(201);
    const quote = await t.request('GET', `/v1/leases/${lease.body.id}/extension`, { token: lessee.token });
    expect(quote.body).toMatchObject({ latest_end: '2030-01-02T08:00:00.000Z', limited_by: { rule: 'offer_window', node_name: 'n-1' } });
    const past = await t.request('PATCH', `/v1/leases/${lease.body.id}`, { token: lessee.token, body: { end: '2030-01-02T09:00:00Z' } });
    expect(past.status).toBe(409);
    expect(past.body.error.message).toContain('2030-01-02T08:00:00.000Z');
    expect((await t.request('GET', `/v1/leases/${lease.body.id}`, { token: lessee.token })).body.end).toBe('2030-01-02T04:00:00.000Z');
    const upTo = await t.request('PATCH', `/v1/leases/${lease.body.id}`, { token: lessee.token, body: { end: '2030-01-02T08:00:00Z' } });
    expect(upTo.status, JSON.stringify(upTo.body)).toBe(200);
    expect((await t.request('DELETE', `/v1/leases/${lease.body.id}`, { token: lessee.token })).status).toBe(200);
  });

  it('show only the windows in the availability timeline, free time and offered time alike', async () => {
    const res = await t.request('GET', '/v1/availability?from=2030-01-01T00:00:00Z&to=2030-01-02T00:00:00Z&where=gpus%20%3D%3D%202', { token: lessee.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const row = res.body.nodes.find((n: { name: string }) => n.name === 'n-2');
    expect(row.free).toEqual([
      { start: '2030-01-01T00:00:00.000Z', end: '2030-01-01T08:00:00.000Z' },
      { start: '2030-01-01T18:00:00.000Z', end: '2030-01-02T00:00:00.000Z' },
    ]);
    // The offer's windows within the range, which the timeline shades instead of the whole period.
    expect(row.offers[0]).toMatchObject({
      weekly_summary: 'Mon–Fri 18:00–08:00 (next day), Sat–Sun all day (UTC)',
      windows: [
        { start: '2030-01-01T00:00:00.000Z', end: '2030-01-01T08:00:00.000Z' },
        { start: '2030-01-01T18:00:00.000Z', end: '2030-01-02T00:00:00.000Z' },
      ],
    });
  });
});
