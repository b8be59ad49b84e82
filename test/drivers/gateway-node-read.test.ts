import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { IronicDriver } from '../../src/drivers/ironic/ironic-driver.js';
import { createProjectUser, startApp, type TestApp } from '../support/test-app.js';
import { FakeIronic, rawNode, uuid } from './fake-ironic.js';

/**
 * Issue 15, the gateway's node GET: a node request's token, caller, node and current lease are read in one store
 * query (Store.tokenWithNode), never with a node read begun before the caller is known. What access must stay: a
 * lessee's own node answered (by name and by uuid), another's a 404, nobody let in before its lease starts, access
 * cut at the lease's end, a revoked token refused at once. Ironic is a fake HTTP server behind the real driver.
 */

const NODE = uuid(1);

let h: TestApp & { readonly fake: FakeIronic };
let owner: { projectId: string; userId: string; token: string };
let lessee: { projectId: string; userId: string; token: string };
let stranger: { projectId: string; userId: string; token: string };

beforeEach(async () => {
  const clock = new ManualClock('2030-01-01T00:00:00Z');
  const fake = await new FakeIronic(clock).start();
  fake.add(rawNode(1, { name: 'gpu-01', owner: 'physics-lab', power_state: 'power on' }));
  const t = await startApp({
    nodes: [],
    clock,
    driver: ({ logger }) => new IronicDriver({ url: fake.url, auth: { type: 'none' }, clock, logger }),
  });
  h = {
    ...t,
    fake,
    async close() {
      await t.close();
      await fake.stop();
    },
  };
  owner = await createProjectUser(h, 'physics-lab', 'member');
  lessee = await createProjectUser(h, 'bio-lab', 'member');
  stranger = await createProjectUser(h, 'chem-lab', 'member');
  const offer = await h.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'gpu-01' } });
  expect(offer.status, JSON.stringify(offer.body)).toBe(201);
});

afterEach(async () => {
  vi.restoreAllMocks();
  await h?.close();
});

const show = (token: string, ident = 'gpu-01') => h.request('GET', `/baremetal/v1/nodes/${ident}`, { token });

async function lease(body: Record<string, unknown> = {}): Promise<{ id: string; start: number; end: number }> {
  const res = await h.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['gpu-01'], duration: '5m', ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.id, start: Date.parse(res.body.start), end: Date.parse(res.body.end) };
}

describe('a gateway node GET', () => {
  it("answers a lessee its own node by name and by uuid, and a third party 404 for the same node", async () => {
    await lease();
    for (const ident of ['gpu-01', NODE]) {
      const mine = await show(lessee.token, ident);
      expect(mine.status, JSON.stringify(mine.body)).toBe(200);
      expect(mine.body).toMatchObject({ uuid: NODE, name: 'gpu-01' });
      expect((await show(stranger.token, ident)).status).toBe(404);
    }
    expect((await show(owner.token)).status).toBe(200);
    expect((await show(lessee.token, 'no-such-node')).status).toBe(404);
  });

  it('reads the token, its caller, the node and its current lease in one store query', async () => {
    await lease();
    const combined = vi.spyOn(h.store, 'tokenWithNode');
    const separate = [vi.spyOn(h.store, 'authenticate'), vi.spyOn(h.store, 'authenticateMany'), vi.spyOn(h.store, 'nodeWithLease')];
    expect((await show(lessee.token)).status).toBe(200);
    expect(combined).toHaveBeenCalledTimes(1);
    for (const spy of separate) expect(spy).not.toHaveBeenCalled();
  });

  it('lets nobody in before the lease starts', async () => {
    const { start } = await lease({ start: '2030-01-01T01:00:00Z' });
    expect(start).toBe(Date.parse('2030-01-01T01:00:00Z'));
    expect((await show(lessee.token)).status).toBe(404);
    expect((await show(lessee.token, NODE)).status).toBe(404);
  });

  it("cuts the lessee's access at the instant its lease ends", async () => {
    const { end } = await lease();
    await h.clock.advanceTo(new Date(end - 1));
    expect((await show(lessee.token)).status).toBe(200);
    await h.clock.advanceTo(new Date(end));
    expect((await show(lessee.token)).status).toBe(404);
    expect((await h.request('PUT', '/baremetal/v1/nodes/gpu-01/states/power', { token: lessee.token, body: { target: 'power off' } })).status).toBe(404);
  });

  it('refuses a token at once when it is revoked, on a node request as on any other', async () => {
    await lease();
    const issued = await h.request('POST', '/v1/tokens', { body: { user_id: lessee.userId } });
    expect(issued.status, JSON.stringify(issued.body)).toBe(201);
    expect((await show(issued.body.token)).status).toBe(200);
    expect((await h.request('DELETE', `/v1/tokens/${issued.body.id}`)).status).toBe(204);
    expect((await show(issued.body.token)).status).toBe(401);
    expect((await show(issued.body.token, NODE)).status).toBe(401);
    expect((await show(lessee.token)).status).toBe(200);
  });

  it('answers an unknown token 401 without telling whether the node exists', async () => {
    expect((await show('not-a-token')).status).toBe(401);
    expect((await show('not-a-token', 'no-such-node')).status).toBe(401);
  });
});
