import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseEngine } from '../../src/engine/lease-engine.js';
import { createLogger } from '../../src/logger.js';
import { createProjectUser, startApp, type TestApp } from '../support/test-app.js';

// Names beside ids wherever people read (issue 17): each response carries the names of the projects and nodes it
// mentions, read once per page, and lists find things by the short id prefix tables print (and leases and users by
// name), so the CLI and the web UI never look names up themselves.
const node = (n: number, name: string) => ({
  uuid: `5a9e000${n}-0000-4000-8000-00000000000${n}`,
  name,
  owner: 'physics-lab',
  properties: { memory_mb: 65536, cpus: 16, local_gb: 480, cpu_arch: 'x86_64', gpus: 1 },
});
const NODES = [node(1, 'gpu-a'), node(2, 'gpu-b')];
const T0 = Date.parse('2030-01-01T00:00:00Z');
const H = 3_600_000;

let t: TestApp;
let owner: { projectId: string; userId: string; token: string };
let astro: { projectId: string; userId: string; token: string };
let leaseId: string;
let offerId: string;

beforeAll(async () => {
  t = await startApp({ nodes: NODES });
  const engine = new LeaseEngine({ store: t.store, driver: t.driver, clock: t.clock, logger: createLogger('silent'), inventory: t.inventory, networks: t.teardown, watchMs: 0 });
  owner = await createProjectUser(t, 'physics-lab', 'member');
  astro = await createProjectUser(t, 'astro', 'member');
  const geo = await createProjectUser(t, 'geo', 'member');
  const offer = await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'gpu-a', allowed_projects: ['astro', geo.projectId] } });
  expect(offer.status, JSON.stringify(offer.body)).toBe(201);
  offerId = offer.body.id;
  expect((await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'gpu-b' } })).status).toBe(201);
  const lease = await t.request('POST', '/v1/leases', { token: astro.token, body: { name: 'nightly', nodes: ['gpu-a'], start: new Date(T0 + H).toISOString(), duration: '2h' } });
  expect(lease.status, JSON.stringify(lease.body)).toBe(201);
  leaseId = lease.body.id;
  const again = await t.request('POST', '/v1/leases', { token: astro.token, body: { name: 'nightly', nodes: ['gpu-b'], start: new Date(T0 + H).toISOString(), duration: '2h' } });
  expect(again.status, JSON.stringify(again.body)).toBe(201);
  await t.clock.advanceTo(new Date(T0 + H));
  await engine.runDue();
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe('names beside ids', () => {
  it("users carry their project's name; the operator has none", async () => {
    const list = await t.request('GET', `/v1/users?project_id=astro`);
    expect(list.body.users).toEqual([expect.objectContaining({ id: astro.userId, project_id: astro.projectId, project_name: 'astro' })]);
    expect((await t.request('GET', `/v1/users/${owner.userId}`)).body).toMatchObject({ project_name: 'physics-lab' });
    expect((await t.request('GET', '/v1/me')).body.user).toMatchObject({ name: 'admin', project_id: null, project_name: null });
  });

  it("a leased node names its lessee, for the owner as for the lessee, on the node and in the list", async () => {
    for (const token of [owner.token, astro.token]) {
      const shown = await t.request('GET', '/v1/nodes/gpu-a', { token });
      expect(shown.body.lease, JSON.stringify(shown.body)).toMatchObject({ id: leaseId, project_id: astro.projectId, project_name: 'astro' });
      const listed = await t.request('GET', '/v1/nodes', { token });
      expect(listed.body.nodes.find((n: { name: string }) => n.name === 'gpu-a').lease).toMatchObject({ project_name: 'astro' });
    }
  });

  it("an offer names its owner and its allowed projects, in their order, so an owner reads them without listing projects", async () => {
    const shown = await t.request('GET', `/v1/offers/${offerId}`, { token: owner.token });
    expect(shown.body).toMatchObject({ project_name: 'physics-lab', allowed_project_names: ['astro', 'geo'] });
    const open = (await t.request('GET', '/v1/offers?node_id=gpu-b', { token: owner.token })).body.offers[0];
    expect(open).toMatchObject({ allowed_projects: null, allowed_project_names: null });
  });

  it("events name their node and project, and say their message with names where it has ids", async () => {
    const res = await t.request('GET', `/v1/events?lease_id=${leaseId}&type=allocation`, { token: astro.token });
    expect(res.status).toBe(200);
    const handed = res.body.events.find((e: { message: string }) => e.message.includes('handed to project'));
    expect(handed, JSON.stringify(res.body.events)).toMatchObject({
      node_id: NODES[0]!.uuid,
      node_name: 'gpu-a',
      project_name: 'astro',
      message: `node ${NODES[0]!.uuid} handed to project ${astro.projectId}`,
      display_message: 'node gpu-a handed to project astro',
    });
  });
});

describe('finding things by name and id prefix', () => {
  it('leases by exact name (two share one here) and by the short id the tables print', async () => {
    const named = await t.request('GET', '/v1/leases?name=nightly', { token: astro.token });
    expect(named.body.leases).toHaveLength(2);
    expect((await t.request('GET', '/v1/leases?name=night', { token: astro.token })).body.leases).toEqual([]);
    const prefixed = await t.request('GET', `/v1/leases?id_prefix=${leaseId.slice(0, 8).toUpperCase()}`, { token: astro.token });
    expect(prefixed.body.leases.map((l: { id: string }) => l.id)).toEqual([leaseId]);
  });

  it('a prefix finds only what the caller may see', async () => {
    const outsider = await createProjectUser(t, 'outsiders', 'member');
    expect((await t.request('GET', `/v1/leases?id_prefix=${leaseId.slice(0, 8)}`, { token: outsider.token })).body.leases).toEqual([]);
    expect((await t.request('GET', `/v1/users?id_prefix=${astro.userId.slice(0, 8)}`, { token: outsider.token })).body.users).toEqual([]);
    expect((await t.request('GET', '/v1/nodes?id_prefix=5a9e', { token: outsider.token })).body.nodes).toEqual([]);
    const nodes = await t.request('GET', '/v1/nodes?id_prefix=5a9e0002', { token: owner.token });
    expect(nodes.body.nodes.map((n: { name: string }) => n.name)).toEqual(['gpu-b']);
  });

  it('users by name, offers, projects and tokens by id prefix', async () => {
    expect((await t.request('GET', '/v1/users?name=astro-member')).body.users.map((u: { id: string }) => u.id)).toEqual([astro.userId]);
    expect((await t.request('GET', `/v1/offers?id_prefix=${offerId.slice(0, 8)}`, { token: owner.token })).body.offers.map((o: { id: string }) => o.id)).toEqual([offerId]);
    expect((await t.request('GET', `/v1/projects?id_prefix=${astro.projectId.slice(0, 8)}`)).body.projects.map((p: { name: string }) => p.name)).toEqual(['astro']);
    const tokens = (await t.request('GET', `/v1/tokens?user_id=${astro.userId}`)).body.tokens;
    const byPrefix = await t.request('GET', `/v1/tokens?id_prefix=${tokens[0].id.slice(0, 8)}`);
    expect(byPrefix.body.tokens.map((x: { id: string }) => x.id)).toEqual([tokens[0].id]);
  });

  it('a prefix that is not hex digits and dashes is a 400 naming the field, and a wildcard never reaches SQL', async () => {
    for (const bad of ['%25', 'ab_c', 'gpu']) {
      const res = await t.request('GET', `/v1/leases?id_prefix=${bad}`);
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body.error)).toContain('id_prefix');
    }
  });
});
