import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjectUser, startTestApp, type TestApp } from '../support/test-app.js';

const GiB = 1024;
const node = (n: number, name: string, memory_gib: number, gpus: number, local_gb: number, owner = 'physics-lab') => ({
  uuid: `5eed0000-0000-4000-8000-00000000000${n}`,
  name,
  owner,
  properties: { memory_mb: memory_gib * GiB, cpus: 16, local_gb, cpu_arch: 'x86_64', gpus },
});
const SEED = [
  node(1, 'gpu-a', 64, 1, 480),
  node(2, 'gpu-b', 128, 2, 960),
  node(3, 'gpu-c', 96, 1, 480),
  node(4, 'gpu-huge', 1024, 8, 3840),
  node(5, 'store-a', 16, 0, 4000),
  node(6, 'store-big', 1024, 0, 2000),
  node(7, 'small', 8, 0, 100),
];
const SEED_REQUEST = {
  groups: [
    { count: 3, where: 'memory >= 48GiB and gpus >= 1' },
    { count: 1, where: 'memory >= 16GiB and disk >= 1TB' },
  ],
  duration: '3d',
};
const DAY = 86_400_000;

let t: TestApp;
let owner: { projectId: string; token: string };
let lessee: { projectId: string; token: string };
let stranger: { projectId: string; token: string };

beforeAll(async () => {
  t = await startTestApp(SEED);
  owner = await createProjectUser(t, 'physics-lab', 'member');
  lessee = await createProjectUser(t, 'astro', 'member');
  stranger = await createProjectUser(t, 'geo', 'member');
  for (const n of SEED) {
    const res = await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: n.name, max_lease_duration: '5d' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
});
afterAll(async () => {
  await t.close();
});

const names = (lease: { allocations: { node_name: string; group: number }[] }) =>
  lease.allocations.map((a) => `${a.group}:${a.node_name}`).sort();

describe('the seed workflow', () => {
  let leaseId: string;

  it('owners put nodes in the pool with a 5-day maximum, and lessees see the offers with their free windows', async () => {
    const res = await t.request('GET', '/v1/offers?where=gpus%20>=%201', { token: lessee.token });
    expect(res.status).toBe(200);
    expect(res.body.offers.map((o: { node_name: string }) => o.node_name).sort()).toEqual(['gpu-a', 'gpu-b', 'gpu-c', 'gpu-huge']);
    expect(res.body.offers[0]).toMatchObject({ max_lease_duration: 'P5D', status: 'active', end: null, free_windows: [{ start: '2030-01-01T00:00:00.000Z', end: null }] });
    const ranged = await t.request('GET', '/v1/offers?from=2030-02-01T00:00:00Z&to=2030-02-02T00:00:00Z', { token: lessee.token });
    expect(ranged.body.offers).toHaveLength(SEED.length);
    const bad = await t.request('GET', '/v1/offers?from=2030-02-02T00:00:00Z&to=2030-02-01T00:00:00Z', { token: lessee.token });
    expect(bad.status).toBe(400);
  });

  it('a quote for 3 GPU nodes and 1 disk node picks the best fits and changes nothing', async () => {
    const quote = await t.request('POST', '/v1/leases/quote', { token: lessee.token, body: SEED_REQUEST });
    expect(quote.status, JSON.stringify(quote.body)).toBe(200);
    expect(quote.body.duration).toBe('P3D');
    expect(quote.body.allocations.map((a: { group: number; node_name: string }) => `${a.group}:${a.node_name}`).sort()).toEqual([
      '0:gpu-a',
      '0:gpu-b',
      '0:gpu-c',
      '1:store-a',
    ]);
    expect((await t.request('GET', '/v1/leases', { token: lessee.token })).body.leases).toEqual([]);
  });

  it('the lease takes exactly those nodes — the 16 GiB disk node, not the 1 TiB one', async () => {
    const res = await t.request('POST', '/v1/leases', { token: lessee.token, body: { ...SEED_REQUEST, name: 'seed' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ name: 'seed', project_id: lessee.projectId, state: 'pending', start: '2030-01-01T00:00:00.000Z', end: '2030-01-04T00:00:00.000Z' });
    expect(names(res.body)).toEqual(['0:gpu-a', '0:gpu-b', '0:gpu-c', '1:store-a']);
    // The number people read (messages, the CLI's table, the web UI) is beside the index, in every allocation.
    expect(res.body.allocations.every((a: { group: number; group_number: number }) => a.group_number === a.group + 1)).toBe(true);
    expect(res.body.allocations.every((a: { state: string }) => a.state === 'reserved')).toBe(true);
    leaseId = res.body.id;
  });

  it('a 6-day request is refused with the policy that refuses it', async () => {
    const res = await t.request('POST', '/v1/leases', { token: stranger.token, body: { ...SEED_REQUEST, duration: '6d' } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('lease_unavailable');
    expect(res.body.error.message).toContain('offer allows at most P5D');
    expect(res.body.error.details.earliest_start).toBeNull();
  });

  it('an unmet request gets 409 with the earliest start at which it fits', async () => {
    const res = await t.request('POST', '/v1/leases/quote', {
      token: stranger.token,
      body: { groups: [{ count: 2, where: 'gpus >= 1' }], duration: '1d' },
    });
    expect(res.status).toBe(409);
    expect(res.body.error.message).toMatch(/group 1 \(2 × gpus >= 1\): 4 match, 4 allowed, 1 free — short by 1/);
    expect(res.body.error.details.groups).toMatchObject([{ group: 0, group_number: 1, count: 2, matching: 4, allowed: 4, free: 1 }]);
    // The seed lease ends on day 3; with the 10-minute cleaning gap its nodes are free at 00:10.
    expect(res.body.error.details.earliest_start).toBe('2030-01-04T00:10:00.000Z');
    const later = await t.request('POST', '/v1/leases/quote', {
      token: stranger.token,
      body: { groups: [{ count: 2, where: 'gpus >= 1' }], duration: '1d', start: res.body.error.details.earliest_start },
    });
    expect(later.status).toBe(200);
  });

  it('the lessee sees and powers its nodes while the lease is active; strangers see nothing', async () => {
    const mine = await t.request('GET', '/v1/nodes', { token: lessee.token });
    expect(mine.body.nodes.map((n: { name: string }) => n.name)).toEqual(['gpu-a', 'gpu-b', 'gpu-c', 'store-a']);
    expect(mine.body.nodes[0].lease).toMatchObject({ id: leaseId, project_id: lessee.projectId });
    const on = await t.request('POST', '/v1/nodes/gpu-a/power', { token: lessee.token, body: { action: 'on' } });
    expect(on.status).toBe(202);
    await t.clock.advance(50);
    expect((await t.driver.getNode('gpu-a')).power_state).toBe('power on');
    expect((await t.request('GET', '/v1/nodes/gpu-a', { token: stranger.token })).status).toBe(404);
    expect((await t.request('POST', '/v1/nodes/gpu-a/power', { token: stranger.token, body: { action: 'off' } })).status).toBe(404);
    expect((await t.request('GET', `/v1/leases/${leaseId}`, { token: stranger.token })).status).toBe(404);
    expect((await t.request('POST', '/v1/nodes/gpu-huge/power', { token: lessee.token, body: { action: 'on' } })).status).toBe(404);
  });

  it('the lessee reads back the boot device it set during its lease; a stranger cannot read it', async () => {
    const set = await t.request('POST', '/v1/nodes/gpu-a/boot-device', { token: lessee.token, body: { device: 'pxe', persistent: true } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const read = await t.request('GET', '/v1/nodes/gpu-a/boot-device', { token: lessee.token });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ boot_device: 'pxe', persistent: true });
    expect((await t.request('GET', '/v1/nodes/gpu-a/boot-device', { token: stranger.token })).status).toBe(404);
  });

  it('the owner sees the lease on its nodes, read only', async () => {
    const seen = await t.request('GET', `/v1/leases/${leaseId}`, { token: owner.token });
    expect(seen.status).toBe(200);
    const changed = await t.request('PATCH', `/v1/leases/${leaseId}`, { token: owner.token, body: { end: '2030-01-03T00:00:00Z' } });
    expect(changed.status).toBe(403);
    expect((await t.request('GET', '/v1/leases', { token: owner.token })).body.leases.map((l: { id: string }) => l.id)).toEqual([leaseId]);
  });

  it('an extension past the owner policy is refused; one within it is granted', async () => {
    const tooLong = await t.request('PATCH', `/v1/leases/${leaseId}`, { token: lessee.token, body: { end: '2030-01-06T00:00:01Z' } });
    expect(tooLong.status).toBe(409);
    expect(tooLong.body.error.code).toBe('policy_violation');
    const ok = await t.request('PATCH', `/v1/leases/${leaseId}`, { token: lessee.token, body: { end: '2030-01-05T00:00:00Z' } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.end).toBe('2030-01-05T00:00:00.000Z');
  });

  it('the lessee loses access at the end instant, not a moment later', async () => {
    await t.clock.advanceTo('2030-01-04T23:59:59.999Z');
    expect((await t.request('GET', '/v1/nodes/gpu-a', { token: lessee.token })).status).toBe(200);
    await t.clock.advance(1);
    expect((await t.request('GET', '/v1/nodes/gpu-a', { token: lessee.token })).status).toBe(404);
    expect((await t.request('POST', '/v1/nodes/gpu-a/power', { token: lessee.token, body: { action: 'off' } })).status).toBe(404);
    expect((await t.request('GET', '/v1/nodes', { token: lessee.token })).body.nodes).toEqual([]);
    expect((await t.request('GET', `/v1/leases/${leaseId}`, { token: lessee.token })).status).toBe(200);
  });

  it('every change is in the audit log, visible to the projects it concerns', async () => {
    const events = await t.request('GET', `/v1/events?lease_id=${leaseId}`, { token: lessee.token });
    expect(events.body.events.map((e: { type: string }) => e.type)).toEqual(['lease.extended', 'lease.created']);
    const power = await t.request('GET', '/v1/events?type=node.power', { token: owner.token });
    expect(power.body.events[0]).toMatchObject({ type: 'node.power', actor: 'astro-member', outcome: 'ok', details: { action: 'on', as: 'lessee' } });
    expect((await t.request('GET', '/v1/events?type=node.power', { token: stranger.token })).body.events).toEqual([]);
  });

  it('the type filter matches a type and its sub-types, taking % and _ literally', async () => {
    const lease = await t.request('GET', '/v1/events?type=lease', { token: lessee.token });
    expect(lease.body.events.length).toBeGreaterThan(0);
    expect(lease.body.events.every((e: { type: string }) => e.type.startsWith('lease.'))).toBe(true);
    for (const pattern of ['%', 'lease%', '_ease', 'node._ower']) {
      const res = await t.request('GET', `/v1/events?type=${encodeURIComponent(pattern)}`, { token: owner.token });
      expect(res.status, pattern).toBe(200);
      expect(res.body.events, pattern).toEqual([]);
    }
  });
});

describe('advance reservations and cancelling', () => {
  it('a future lease holds its nodes until cancelled, then frees them', async () => {
    const start = new Date(t.clock.now().getTime() + 10 * DAY).toISOString();
    const body = { nodes: ['gpu-huge'], start, duration: '1d' };
    const first = await t.request('POST', '/v1/leases', { token: lessee.token, body });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const clash = await t.request('POST', '/v1/leases', { token: stranger.token, body });
    expect(clash.status).toBe(409);
    const cancelled = await t.request('DELETE', `/v1/leases/${first.body.id}`, { token: lessee.token });
    expect(cancelled.body.state).toBe('cancelled');
    expect((await t.request('POST', '/v1/leases', { token: stranger.token, body })).status).toBe(201);
  });

  it('an owner may lease its own nodes without an offer; others may not lease unoffered nodes', async () => {
    await t.request('POST', '/v1/projects', { body: { name: 'private-lab' } });
    t.driver.addNode(node(8, 'private-1', 32, 0, 200, 'private-lab'));
    await t.request('POST', '/v1/nodes/sync');
    const priv = await createProjectUser(t, 'private-lab', 'member');
    const own = await t.request('POST', '/v1/leases/quote', { token: priv.token, body: { nodes: ['private-1'], duration: '1h' } });
    expect(own.status).toBe(200);
    const other = await t.request('POST', '/v1/leases/quote', { token: stranger.token, body: { nodes: ['private-1'], duration: '1h' } });
    expect(other.status).toBe(400);
    expect(other.body.error.message).toContain('no node "private-1" is known to you');
  });

  it('the project quota caps the nodes it holds at once', async () => {
    const capped = await createProjectUser(t, 'capped', 'member');
    await t.request('PATCH', '/v1/projects/capped', { body: { quota: { max_nodes: 1, max_lease_duration: '2d' } } });
    const two = await t.request('POST', '/v1/leases/quote', { token: capped.token, body: { groups: [{ count: 2, where: 'cpus >= 1' }], duration: '1h' } });
    expect(two.status).toBe(409);
    expect(two.body.error.code).toBe('policy_violation');
    const long = await t.request('POST', '/v1/leases/quote', { token: capped.token, body: { nodes: ['small'], duration: '3d' } });
    expect(long.body.error.message).toContain('at most P2D');
  });
});

describe('wipe before reuse', () => {
  it('a quarantined node is neither handed to its lessee nor leasable until its owner clears it', async () => {
    const start = t.clock.now();
    const lease = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['small'], duration: '2h' } });
    expect(lease.status, JSON.stringify(lease.body)).toBe(201);
    expect((await t.request('GET', '/v1/nodes/small', { token: lessee.token })).status).toBe(200);

    await t.store.tasks.quarantineNode('5eed0000-0000-4000-8000-000000000007', 'clean failed: disk erase', start);
    expect((await t.request('GET', '/v1/nodes/small', { token: lessee.token })).status).toBe(404);
    const shown = await t.request('GET', '/v1/nodes/small', { token: owner.token });
    expect(shown.body).toMatchObject({ quarantined: true, quarantine_reason: 'clean failed: disk erase' });
    const quote = await t.request('POST', '/v1/leases/quote', {
      token: stranger.token,
      body: { nodes: ['small'], duration: '1h', start: new Date(start.getTime() + 5 * 3_600_000).toISOString() },
    });
    expect(quote.status).toBe(409);
    expect(quote.body.error.message).toContain('quarantined');

    expect((await t.request('PATCH', '/v1/nodes/small', { token: stranger.token, body: { quarantined: false } })).status).toBe(404);
    const cleared = await t.request('PATCH', '/v1/nodes/small', { token: owner.token, body: { quarantined: false } });
    expect(cleared.status).toBe(200);
    expect(cleared.body.quarantined).toBe(false);
    expect((await t.request('GET', '/v1/nodes/small', { token: lessee.token })).status).toBe(200);
    const events = await t.request('GET', '/v1/events?type=node.quarantine_cleared', { token: owner.token });
    expect(events.body.events).toHaveLength(1);
  });
});

describe('bad lease requests', () => {
  it.each([
    [{ groups: [{ count: 1, where: 'memory >= ' }], duration: '1d' }, /position 11/],
    [{ groups: [{ count: 1, where: 'ram >= 4GiB' }], duration: '1d' }, /unknown fact "ram".*known facts: .*memory/],
    [{ groups: [{ count: 0, where: 'cpus >= 1' }], duration: '1d' }, /count/],
    [{ groups: [{ count: 1, where: 'cpus >= 1' }], duration: '1d', end: '2031-01-01T00:00:00Z' }, /either end or duration/],
    [{ groups: [{ count: 1, where: 'cpus >= 1' }] }, /end or duration/],
    [{ duration: '1d' }, /name nodes or give requirement groups/],
    [{ nodes: ['gpu-a'], duration: 'soon' }, /duration/],
    [{ nodes: ['gpu-a'], duration: '1d', start: '2000-01-01T00:00:00Z' }, /in the past/],
  ])('%j is a 400 that says what is wrong and books nothing', async (body, message) => {
    const before = (await t.request('GET', '/v1/leases?limit=1000')).body.leases.length;
    const res = await t.request('POST', '/v1/leases', { token: lessee.token, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.message).toMatch(message);
    expect((await t.request('GET', '/v1/leases?limit=1000')).body.leases.length).toBe(before);
  });

  it('a reader cannot lease; an unknown lease is a 404', async () => {
    const reader = await createProjectUser(t, 'astro', 'reader', 'astro-reader');
    expect((await t.request('POST', '/v1/leases', { token: reader.token, body: { nodes: ['small'], duration: '1h' } })).status).toBe(403);
    expect((await t.request('GET', '/v1/leases/00000000-0000-4000-8000-000000000000', { token: lessee.token })).status).toBe(404);
    expect((await t.request('DELETE', '/v1/leases/nope', { token: lessee.token })).status).toBe(404);
  });
});
