import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjectUser, startApp, type TestApp } from '../support/test-app.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const node = (n: number, name: string) => ({
  uuid: `e7e40000-0000-4000-8000-00000000000${n}`,
  name,
  owner: 'cham-lab',
  properties: { memory_mb: 65536, cpus: 16, local_gb: 480, cpu_arch: 'x86_64' },
});

let t: TestApp;
let owner: { token: string };
let lessee: { projectId: string; token: string };
let manager: { token: string };
let other: { token: string };
const iso = (ms: number) => new Date(ms).toISOString();
const now = () => t.clock.now().getTime();

beforeAll(async () => {
  t = await startApp({ nodes: [node(1, 'cham-1'), node(2, 'cham-2'), node(3, 'cham-3')] });
  owner = await createProjectUser(t, 'cham-lab', 'member');
  lessee = await createProjectUser(t, 'climate', 'member');
  manager = await createProjectUser(t, 'climate', 'manager');
  other = await createProjectUser(t, 'geo', 'member');
  // Chameleon's rule: leases of up to 7 days, extended within 48 h of the end, up to 7 days from now, 14 days in all.
  for (const n of ['cham-1', 'cham-2']) {
    const res = await t.request('POST', '/v1/offers', {
      token: owner.token,
      body: { node_id: n, max_lease_duration: 'P7D', extension_window: 'P2D', extension_max_ahead: 'P7D', max_total_length: 'P14D' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ extension_window: 'P2D', extension_max_ahead: 'P7D', max_total_length: 'P14D' });
  }
  expect((await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'cham-3' } })).status).toBe(201);
});
afterAll(async () => {
  await t.close();
});

describe("an offer's extension policy", () => {
  it('refuses a total limit shorter than the longest lease, and creates nothing', async () => {
    const res = await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'cham-3', max_lease_duration: 'P7D', max_total_length: 'P3D' } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe('max_total_length');
    expect((await t.request('GET', '/v1/offers?node_id=cham-3', { token: owner.token })).body.offers).toHaveLength(1);
  });

  it('within 48 h of the end, up to 7 days from now, never past 14 days: each refusal names its rule and changes nothing', async () => {
    const start = now();
    const created = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['cham-1'], duration: 'P7D' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id;
    const patch = (end: number) => t.request('PATCH', `/v1/leases/${id}`, { token: lessee.token, body: { end: iso(end) } });

    let quote = await t.request('GET', `/v1/leases/${id}/extension`, { token: lessee.token });
    expect(quote.body).toMatchObject({ extendable: false, latest_end: iso(start + 7 * DAY), limited_by: { rule: 'extension_window', node_name: 'cham-1' }, window: { open: false, opens_at: iso(start + 5 * DAY) } });
    let refused = await patch(start + 8 * DAY);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'policy_violation', details: { rule: 'extension_window', window_opens_at: iso(start + 5 * DAY) } });
    expect((await t.request('GET', `/v1/leases/${id}`, { token: lessee.token })).body.end).toBe(iso(start + 7 * DAY));

    await t.clock.advance(6 * DAY);
    quote = await t.request('GET', `/v1/leases/${id}/extension`, { token: lessee.token });
    expect(quote.body).toMatchObject({ extendable: true, latest_end: iso(start + 13 * DAY), max_extension: 'P6D', limited_by: { rule: 'extension_max_ahead' }, window: { open: true, opens_at: null } });
    refused = await patch(start + 13 * DAY + HOUR);
    expect(refused.body.error.details).toMatchObject({ rule: 'extension_max_ahead', latest_end: iso(start + 13 * DAY) });
    expect((await patch(start + 13 * DAY)).status).toBe(200);

    await t.clock.advance(6 * DAY);
    quote = await t.request('GET', `/v1/leases/${id}/extension`, { token: lessee.token });
    expect(quote.body).toMatchObject({ latest_end: iso(start + 14 * DAY), limited_by: { rule: 'max_total_length' } });
    refused = await patch(start + 15 * DAY);
    expect(refused.status).toBe(409);
    expect(refused.body.error.details.rule).toBe('max_total_length');
    expect(refused.body.error.message).toContain('max_total_length');
    expect((await t.request('DELETE', `/v1/leases/${id}`, { token: lessee.token })).status).toBe(200);
    await t.clock.advance(HOUR);
  });

  it('the quote names the next lease on a node as what limits it, and only the lessee and the operator may ask', async () => {
    const mine = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['cham-3'], duration: 'P1D' } });
    const theirs = await t.request('POST', '/v1/leases', { token: other.token, body: { nodes: ['cham-3'], start: iso(now() + 2 * DAY), duration: 'P1D' } });
    expect(theirs.status, JSON.stringify(theirs.body)).toBe(201);
    const quote = await t.request('GET', `/v1/leases/${mine.body.id}/extension`, { token: lessee.token });
    // The next lease's start less the cleaning gap (10 minutes).
    expect(quote.body).toMatchObject({ latest_end: iso(now() + 2 * DAY - 10 * 60_000), limited_by: { rule: 'next_booking', node_name: 'cham-3' } });
    expect((await t.request('GET', `/v1/leases/${mine.body.id}/extension`, { token: other.token })).status).toBe(404);
    expect((await t.request('GET', `/v1/leases/${mine.body.id}/extension`)).status).toBe(200);
    for (const [l, token] of [[mine, lessee.token], [theirs, other.token]] as const) await t.request('DELETE', `/v1/leases/${l.body.id}`, { token });
    await t.clock.advance(HOUR);
  });
});

describe('auto-renew and notices through the API', () => {
  it('auto-renew is asked at create with a total, shown on the lease, turned off with null; a limit before the end is refused and books nothing', async () => {
    const onNode = async () => (await t.request('GET', '/v1/leases?node_id=cham-2', { token: lessee.token })).body.leases.length;
    const before = await onNode();
    const bad = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['cham-2'], duration: 'P2D', auto_renew: { step: 'P1D', until: iso(now() + DAY) } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe('auto_renew.until');
    expect(await onNode()).toBe(before);

    const res = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['cham-2'], duration: 'P2D', auto_renew: { step: 'P1D', max_total: 'P10D' } } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.auto_renew).toEqual({ step: 'P1D', until: iso(now() + 10 * DAY), state: 'on', rule: null, message: null });
    const both = await t.request('PATCH', `/v1/leases/${res.body.id}`, { token: lessee.token, body: { auto_renew: { step: 'P1D', until: iso(now() + DAY), max_total: 'P3D' } } });
    expect(both.status).toBe(400);
    const off = await t.request('PATCH', `/v1/leases/${res.body.id}`, { token: lessee.token, body: { auto_renew: null } });
    expect(off.body.auto_renew).toBeNull();
    const events = await t.request('GET', `/v1/events?lease_id=${res.body.id}&type=lease.auto_renew_changed`, { token: lessee.token });
    expect(events.body.events).toHaveLength(2);
    await t.request('DELETE', `/v1/leases/${res.body.id}`, { token: lessee.token });
    await t.clock.advance(HOUR);
  });

  it("a lease shows its notices' instants; the project's manager sets its own offsets, a member cannot", async () => {
    const res = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['cham-2'], duration: 'P2D' } });
    const end = now() + 2 * DAY;
    expect(res.body.notices).toEqual([
      { offset: 'P1D', at: iso(end - DAY), sent_at: null },
      { offset: 'PT1H', at: iso(end - HOUR), sent_at: null },
    ]);
    expect((await t.request('PATCH', '/v1/projects/climate', { token: lessee.token, body: { notice_offsets: ['PT30M'] } })).status).toBe(403);
    expect((await t.request('PATCH', '/v1/projects/climate', { token: manager.token, body: { quota: { max_nodes: 100 } } })).status).toBe(403);
    const set = await t.request('PATCH', '/v1/projects/climate', { token: manager.token, body: { notice_offsets: ['PT30M', 'P2D'] } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.notice_offsets).toEqual(['P2D', 'PT30M']);
    const shown = await t.request('GET', `/v1/leases/${res.body.id}`, { token: lessee.token });
    expect(shown.body.notices.map((n: { offset: string; at: string }) => [n.offset, n.at])).toEqual([
      ['P2D', iso(now())],
      ['PT30M', iso(end - 30 * 60_000)],
    ]);
    expect((await t.request('PATCH', '/v1/projects/climate', { token: manager.token, body: { notice_offsets: null } })).body.notice_offsets).toBeNull();
    await t.request('DELETE', `/v1/leases/${res.body.id}`, { token: lessee.token });
  });
});
