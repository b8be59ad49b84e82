import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLEANING_GAP_MS, createProjectUser, startTestApp, type TestApp } from '../support/test-app.js';

const node = (n: number, name: string, owner: string, gpus: number) => ({
  uuid: `a5a10000-0000-4000-8000-00000000000${n}`,
  name,
  owner,
  properties: { memory_mb: 65536, cpus: 16, local_gb: 480, cpu_arch: 'x86_64', gpus },
});
const SEED = [
  node(1, 'gpu-01', 'physics-lab', 1),
  node(2, 'gpu-02', 'physics-lab', 8),
  node(3, 'store-01', 'bio-lab', 0),
  node(4, 'cpu-01', 'physics-lab', 0),
];
const T0 = Date.parse('2030-01-01T00:00:00Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();
const WEEK = `from=${iso(T0)}&to=${iso(T0 + 7 * DAY)}`;

interface Row {
  name: string;
  owned: boolean;
  owner_project: { id: string; name: string } | null;
  unavailable: string | null;
  offers: { start: string; end: string | null }[];
  busy: { start: string; end: string; kind: string; lease?: { id: string; name: string; project: { name: string } } }[];
  free: { start: string; end: string }[];
}

let t: TestApp;
let owner: { projectId: string; token: string };
let bio: { projectId: string; token: string };
let astro: { projectId: string; token: string };
let geo: { projectId: string; token: string };
let astroLease: string;
let geoLease: string;

async function timeline(token: string, query = WEEK): Promise<Row[]> {
  const res = await t.request('GET', `/v1/availability?${query}`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.nodes;
}
const row = (rows: Row[], name: string) => rows.find((r) => r.name === name)!;

beforeAll(async () => {
  t = await startTestApp(SEED);
  owner = await createProjectUser(t, 'physics-lab', 'member');
  bio = await createProjectUser(t, 'bio-lab', 'member');
  astro = await createProjectUser(t, 'astro', 'member');
  geo = await createProjectUser(t, 'geo', 'member');
  const offer = async (token: string, body: object) => {
    const res = await t.request('POST', '/v1/offers', { token, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  };
  await offer(owner.token, { node_id: 'gpu-01' });
  await offer(owner.token, { node_id: 'gpu-02', start: iso(T0 + DAY), end: iso(T0 + 5 * DAY) });
  await offer(bio.token, { node_id: 'store-01', allowed_projects: ['astro'] });
  // astro: gpu-01 for the first day; geo: gpu-01 on day 3 for 6 hours.
  const a = await t.request('POST', '/v1/leases', { token: astro.token, body: { name: 'astro-run', nodes: ['gpu-01'], duration: '1d' } });
  expect(a.status, JSON.stringify(a.body)).toBe(201);
  astroLease = a.body.id;
  const g = await t.request('POST', '/v1/leases', {
    token: geo.token,
    body: { name: 'geo-secret', nodes: ['gpu-01'], start: iso(T0 + 2 * DAY), duration: '6h' },
  });
  expect(g.status, JSON.stringify(g.body)).toBe(201);
  geoLease = g.body.id;
});
afterAll(async () => {
  await t.close();
});

describe('GET /v1/availability', () => {
  it('a lessee sees its own lease named, with the cleaning gap after it drawn as cleaning', async () => {
    const gpu = row(await timeline(astro.token), 'gpu-01');
    expect(gpu.busy[0]).toEqual({
      start: iso(T0),
      end: iso(T0 + DAY),
      kind: 'lease',
      lease: { id: astroLease, name: 'astro-run', state: 'pending', project: { id: astro.projectId, name: 'astro' } },
    });
    expect(gpu.busy[1]).toMatchObject({ start: iso(T0 + DAY), end: iso(T0 + DAY + CLEANING_GAP_MS), kind: 'cleaning', lease: { id: astroLease } });
  });

  it("a lessee sees another project's lease on a node only as busy", async () => {
    const gpu = row(await timeline(astro.token), 'gpu-01');
    const other = gpu.busy.filter((b) => !b.lease);
    expect(other).toEqual([
      { start: iso(T0 + 2 * DAY), end: iso(T0 + 2 * DAY + 6 * HOUR), kind: 'lease' },
      { start: iso(T0 + 2 * DAY + 6 * HOUR), end: iso(T0 + 2 * DAY + 6 * HOUR + CLEANING_GAP_MS), kind: 'cleaning' },
    ]);
    const res = await t.request('GET', `/v1/availability?${WEEK}`, { token: astro.token });
    expect(JSON.stringify(res.body)).not.toContain('geo');
    expect(JSON.stringify(res.body)).not.toContain(geoLease);
  });

  it("the owner sees who leases its nodes, and the operator sees every lease", async () => {
    for (const token of [owner.token, undefined]) {
      const res = await t.request('GET', `/v1/availability?${WEEK}`, { token });
      const gpu = row(res.body.nodes, 'gpu-01');
      expect(gpu.busy.filter((b) => b.kind === 'lease').map((b) => `${b.lease?.name}/${b.lease?.project.name}`)).toEqual([
        'astro-run/astro',
        'geo-secret/geo',
      ]);
    }
  });

  it('a project gets the nodes it owns, those offered to it and those it leases; the operator every node', async () => {
    expect((await timeline(owner.token)).map((r) => r.name)).toEqual(['cpu-01', 'gpu-01', 'gpu-02']);
    expect((await timeline(astro.token)).map((r) => r.name)).toEqual(['gpu-01', 'gpu-02', 'store-01']);
    // store-01 is offered to astro only.
    expect((await timeline(geo.token)).map((r) => r.name)).toEqual(['gpu-01', 'gpu-02']);
    expect((await timeline(bio.token)).map((r) => r.name)).toEqual(['gpu-01', 'gpu-02', 'store-01']);
    const all = await t.request('GET', `/v1/availability?${WEEK}`);
    expect(all.body.nodes.map((r: Row) => r.name)).toEqual(['cpu-01', 'gpu-01', 'gpu-02', 'store-01']);
  });

  it('only the operator and the owner are told who owns a node', async () => {
    expect(row(await timeline(owner.token), 'gpu-01')).toMatchObject({ owned: true, owner_project: { id: owner.projectId, name: 'physics-lab' } });
    expect(row(await timeline(astro.token), 'gpu-01')).toMatchObject({ owned: false, owner_project: null });
  });

  it('offer windows are shown as offered; free windows start now, stay inside them and leave each booking its cleaning gap', async () => {
    const rows = await timeline(geo.token);
    const gpu2 = row(rows, 'gpu-02');
    expect(gpu2.offers).toMatchObject([{ start: iso(T0 + DAY), end: iso(T0 + 5 * DAY) }]);
    expect(gpu2.free).toEqual([{ start: iso(T0 + DAY), end: iso(T0 + 5 * DAY) }]);
    const gpu1 = row(rows, 'gpu-01');
    expect(gpu1.free).toEqual([
      { start: iso(T0 + DAY + CLEANING_GAP_MS), end: iso(T0 + 2 * DAY - CLEANING_GAP_MS) },
      { start: iso(T0 + 2 * DAY + 6 * HOUR + CLEANING_GAP_MS), end: iso(T0 + 7 * DAY) },
    ]);
  });

  it("an owner's own node is free for it without an offer; to anyone else a node is free only inside an offer", async () => {
    expect(row(await timeline(owner.token), 'cpu-01').free).toEqual([{ start: iso(T0), end: iso(T0 + 7 * DAY) }]);
    expect(row(await timeline(owner.token), 'cpu-01').offers).toEqual([]);
    const admin = await t.request('GET', `/v1/availability?${WEEK}`);
    expect(row(admin.body.nodes, 'cpu-01').free).toEqual([]);
  });

  it('the window defaults to a week from now and is echoed with the server clock and the cleaning gap', async () => {
    const res = await t.request('GET', '/v1/availability', { token: astro.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ from: iso(T0), to: iso(T0 + 7 * DAY), now: iso(T0), cleaning_gap: 'PT10M', next: null });
  });

  it('busy time is listed when it overlaps the window, with its real bounds', async () => {
    const rows = await timeline(astro.token, `from=${iso(T0 + 12 * HOUR)}&to=${iso(T0 + 2 * DAY)}`);
    expect(row(rows, 'gpu-01').busy.map((b) => `${b.kind} ${b.start}`)).toEqual([`lease ${iso(T0)}`, `cleaning ${iso(T0 + DAY)}`]);
  });

  it('a requirement expression narrows the rows, as GET /v1/offers?where= does', async () => {
    const rows = await timeline(astro.token, `${WEEK}&where=${encodeURIComponent('gpus >= 2')}`);
    expect(rows.map((r) => r.name)).toEqual(['gpu-02']);
  });

  it("a bad expression, a window that ends before it starts, or one over 93 days is a 400 in the one error shape", async () => {
    const bad = await t.request('GET', `/v1/availability?${WEEK}&where=${encodeURIComponent('gpus >>= 1')}`, { token: astro.token });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'where', position: 7 } });
    expect(bad.body.error.message).toMatch(/^invalid expression at position 7/);
    const unknown = await t.request('GET', `/v1/availability?${WEEK}&where=${encodeURIComponent('ram >= 1')}`, { token: astro.token });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toMatch(/unknown fact "ram".*known facts: .*gpus/);
    const backwards = await t.request('GET', `/v1/availability?from=${iso(T0 + DAY)}&to=${iso(T0)}`, { token: astro.token });
    expect(backwards.status).toBe(400);
    expect(backwards.body.error).toMatchObject({ code: 'invalid_request', message: 'to must be after from', details: { field: 'to' } });
    const same = await t.request('GET', `/v1/availability?from=${iso(T0)}&to=${iso(T0)}`, { token: astro.token });
    expect(same.status).toBe(400);
    const long = await t.request('GET', `/v1/availability?from=${iso(T0)}&to=${iso(T0 + 94 * DAY)}`, { token: astro.token });
    expect(long.status).toBe(400);
    expect(long.body.error.message).toContain('longer than 93 days');
    expect((await t.request('GET', `/v1/availability?from=${iso(T0)}&to=${iso(T0 + 93 * DAY)}`, { token: astro.token })).status).toBe(200);
    const notATime = await t.request('GET', '/v1/availability?from=yesterday', { token: astro.token });
    expect(notATime.status).toBe(400);
    expect(notATime.body.error.code).toBe('invalid_request');
  });

  it('pages follow next with the same window', async () => {
    const first = await t.request('GET', `/v1/availability?limit=2`);
    expect(first.body.nodes.map((r: Row) => r.name)).toEqual(['cpu-01', 'gpu-01']);
    expect(first.body.next).toContain('marker=');
    const second = await t.request('GET', first.body.next);
    expect(second.body.nodes.map((r: Row) => r.name)).toEqual(['gpu-02', 'store-01']);
    expect(second.body).toMatchObject({ from: first.body.from, to: first.body.to, next: null });
    const bad = await t.request('GET', '/v1/availability?marker=nope');
    expect(bad.status).toBe(400);
  });

  it('a node in maintenance is marked unavailable and has no free window', async () => {
    t.driver.setMaintenance('a5a10000-0000-4000-8000-000000000002', true, 'fan');
    await t.inventory.syncAll();
    const gpu2 = row(await timeline(astro.token), 'gpu-02');
    expect(gpu2).toMatchObject({ unavailable: 'in maintenance', free: [] });
  });

  it('without a token it is 401', async () => {
    expect((await t.request('GET', '/v1/availability', { token: null })).status).toBe(401);
  });
});
