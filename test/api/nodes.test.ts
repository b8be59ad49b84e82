import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_BMC_PASSWORD, NODE_IDS, createProjectUser, startTestApp, type TestApp } from '../support/test-app.js';

let t: TestApp;
let physics: { projectId: string; token: string };
let bio: { projectId: string; token: string };
let outsider: { projectId: string; token: string };

beforeAll(async () => {
  t = await startTestApp();
  physics = await createProjectUser(t, 'physics-lab', 'manager');
  bio = await createProjectUser(t, 'bio-lab', 'member');
  outsider = await createProjectUser(t, 'outsiders', 'manager');
});
afterAll(async () => {
  await t.close();
});

const names = (body: { nodes: { name: string }[] }) => body.nodes.map((n) => n.name);

describe('node inventory', () => {
  it('the operator sees every node from the driver with typed facts, sorted by name', async () => {
    const res = await t.request('GET', '/v1/nodes');
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(['cpu-01', 'gpu-01', 'gpu-02', 'old-01', 'store-01']);
    const gpu = res.body.nodes.find((n: { id: string }) => n.id === NODE_IDS.gpuSmall);
    expect(gpu).toMatchObject({
      name: 'gpu-01',
      resource_class: 'baremetal.gpu',
      owner: 'physics-lab',
      owner_project: { id: physics.projectId, name: 'physics-lab' },
      traits: ['CUSTOM_GPU_A100'],
      facts: { memory: 64 * 2 ** 30, disk: 480 * 2 ** 30, cpus: 32, gpus: 1, cpu_arch: 'x86_64' },
      provision_state: 'available',
    });
    const storage = res.body.nodes.find((n: { id: string }) => n.id === NODE_IDS.storage);
    expect(storage.facts.boot_mode).toBe('uefi');
  });

  it('BMC credentials never leave the server', async () => {
    const bodies = [
      await t.request('GET', '/v1/nodes'),
      await t.request('GET', `/v1/nodes/${NODE_IDS.gpuSmall}`),
      await t.request('GET', '/v1/nodes', { token: physics.token }),
    ];
    for (const res of bodies) {
      expect(JSON.stringify(res.body)).not.toContain(FAKE_BMC_PASSWORD);
      expect(JSON.stringify(res.body)).not.toContain('driver_info');
    }
  });

  it('a project sees exactly the nodes it owns, whether Ironic names it by name or by id', async () => {
    await t.driver.updateNode(NODE_IDS.compute, { owner: bio.projectId });
    await t.request('POST', '/v1/nodes/sync');
    expect(names((await t.request('GET', '/v1/nodes', { token: physics.token })).body)).toEqual(['gpu-01', 'gpu-02']);
    expect(names((await t.request('GET', '/v1/nodes', { token: bio.token })).body)).toEqual(['cpu-01', 'store-01']);
    expect(names((await t.request('GET', '/v1/nodes', { token: outsider.token })).body)).toEqual([]);
  });

  it("another project's node is a 404, exactly like a node that does not exist", async () => {
    const hidden = await t.request('GET', `/v1/nodes/${NODE_IDS.gpuSmall}`, { token: bio.token });
    const missing = await t.request('GET', '/v1/nodes/00000000-0000-4000-8000-00000000dead', { token: bio.token });
    expect(hidden.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(hidden.body.error.code).toBe(missing.body.error.code);
    expect((await t.request('GET', `/v1/nodes/${NODE_IDS.gpuSmall}`, { token: physics.token })).status).toBe(200);
  });

  it('finds a node by name as well as by uuid, as Ironic does', async () => {
    const byName = await t.request('GET', '/v1/nodes/gpu-01', { token: physics.token });
    expect(byName.status).toBe(200);
    expect(byName.body.id).toBe(NODE_IDS.gpuSmall);
    expect((await t.request('GET', '/v1/nodes/gpu-01', { token: bio.token })).status).toBe(404);
  });

  it('an owner named in Ironic before its project existed resolves once the project is created', async () => {
    const id = '0b6a5c3e-1111-4aaa-8aaa-0000000000aa';
    t.driver.addNode({ uuid: id, name: 'late-01', owner: 'late-lab', properties: { memory_mb: 4096, cpus: 2, local_gb: 50, cpu_arch: 'x86_64' } });
    await t.request('POST', '/v1/nodes/sync');
    const before = await t.request('GET', `/v1/nodes/${id}`);
    expect(before.body.owner_project).toBeNull();
    const late = await createProjectUser(t, 'late-lab', 'reader');
    expect(names((await t.request('GET', '/v1/nodes', { token: late.token })).body)).toEqual(['late-01']);
    expect((await t.request('GET', `/v1/nodes/${id}`)).body.owner_project).toEqual({ id: late.projectId, name: 'late-lab' });
  });

  it('the operator sets an owner and it is written through to the hardware', async () => {
    const res = await t.request('PATCH', `/v1/nodes/${NODE_IDS.orphan}`, { body: { owner: 'outsiders' } });
    expect(res.status).toBe(200);
    expect(res.body.owner).toBe(outsider.projectId);
    expect(res.body.owner_project).toEqual({ id: outsider.projectId, name: 'outsiders' });
    expect((await t.driver.getNode(NODE_IDS.orphan)).owner).toBe(outsider.projectId);
    expect(names((await t.request('GET', '/v1/nodes', { token: outsider.token })).body)).toEqual(['old-01']);

    const cleared = await t.request('PATCH', `/v1/nodes/${NODE_IDS.orphan}`, { body: { owner: null } });
    expect(cleared.body.owner).toBeNull();
    expect((await t.driver.getNode(NODE_IDS.orphan)).owner).toBeNull();
  });

  it('only the operator sets owners: 403 for the owning project, 404 for anyone else', async () => {
    const own = await t.request('PATCH', `/v1/nodes/${NODE_IDS.gpuSmall}`, { token: physics.token, body: { owner: 'bio-lab' } });
    expect(own.status).toBe(403);
    const other = await t.request('PATCH', `/v1/nodes/${NODE_IDS.gpuSmall}`, { token: bio.token, body: { owner: 'bio-lab' } });
    expect(other.status).toBe(404);
    expect((await t.driver.getNode(NODE_IDS.gpuSmall)).owner).toBe('physics-lab');
  });

  it('an owner that names no project is a 400 and changes nothing', async () => {
    const res = await t.request('PATCH', `/v1/nodes/${NODE_IDS.gpuLarge}`, { body: { owner: 'no-such-project' } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.field).toBe('owner');
    expect((await t.driver.getNode(NODE_IDS.gpuLarge)).owner).toBe('physics-lab');
    const bad = await t.request('PATCH', `/v1/nodes/${NODE_IDS.gpuLarge}`, { body: { owner: 7 } });
    expect(bad.status).toBe(400);
  });

  it('nodes added, changed or removed in the hardware show up after a sync', async () => {
    const id = '0b6a5c3e-1111-4aaa-8aaa-0000000000bb';
    t.driver.addNode({ uuid: id, name: 'new-01', properties: { memory_mb: 2048, cpus: 2, local_gb: 20, cpu_arch: 'x86_64' } });
    const added = await t.request('POST', '/v1/nodes/sync');
    expect(added.status).toBe(200);
    expect(added.body.added).toBe(1);
    t.driver.updateProperties(id, { memory_mb: 4096, cpus: 2, local_gb: 20, cpu_arch: 'x86_64' });
    expect((await t.request('POST', '/v1/nodes/sync')).body.updated).toBe(1);
    expect((await t.request('GET', `/v1/nodes/${id}`)).body.facts.memory).toBe(4 * 2 ** 30);
    t.driver.removeNode(id);
    expect((await t.request('POST', '/v1/nodes/sync')).body.removed).toBe(1);
    expect((await t.request('GET', `/v1/nodes/${id}`)).status).toBe(404);
    expect(names((await t.request('GET', '/v1/nodes')).body)).not.toContain('new-01');
  });

  it('a listed node shows what changed since the last list: new facts after a sync, its owner project renamed', async () => {
    const listed = async (id: string, token?: string) =>
      (await t.request('GET', '/v1/nodes', token ? { token } : {})).body.nodes.find((n: { id: string }) => n.id === id);
    const large = { memory_mb: 524288, cpus: 128, local_gb: 1920, cpu_arch: 'x86_64', gpus: 8 };
    expect((await listed(NODE_IDS.gpuLarge)).facts.memory).toBe(512 * 2 ** 30);
    t.driver.updateProperties(NODE_IDS.gpuLarge, { ...large, memory_mb: 1024 * 1024 });
    await t.request('POST', '/v1/nodes/sync');
    expect((await listed(NODE_IDS.gpuLarge)).facts.memory).toBe(1024 * 2 ** 30);
    t.driver.updateProperties(NODE_IDS.gpuLarge, large);
    await t.request('POST', '/v1/nodes/sync');

    await t.driver.updateNode(NODE_IDS.compute, { owner: bio.projectId });
    await t.request('POST', '/v1/nodes/sync');
    expect((await listed(NODE_IDS.compute, bio.token)).owner_project).toEqual({ id: bio.projectId, name: 'bio-lab' });
    expect((await t.request('PATCH', `/v1/projects/${bio.projectId}`, { body: { name: 'bio-lab-2' } })).status).toBe(200);
    expect((await listed(NODE_IDS.compute)).owner_project).toEqual({ id: bio.projectId, name: 'bio-lab-2' });
    expect((await listed(NODE_IDS.compute, bio.token)).owner_project).toEqual({ id: bio.projectId, name: 'bio-lab-2' });
    expect((await t.request('PATCH', `/v1/projects/${bio.projectId}`, { body: { name: 'bio-lab' } })).status).toBe(200);
  });

  it('only the operator may trigger a sync', async () => {
    expect((await t.request('POST', '/v1/nodes/sync', { token: physics.token })).status).toBe(403);
  });

  it('filters by owner, resource class, provision state and maintenance', async () => {
    expect(names((await t.request('GET', '/v1/nodes?owner=physics-lab')).body)).toEqual(['gpu-01', 'gpu-02']);
    expect(names((await t.request('GET', `/v1/nodes?owner=${physics.projectId}`)).body)).toEqual(['gpu-01', 'gpu-02']);
    expect(names((await t.request('GET', '/v1/nodes?resource_class=baremetal.storage')).body)).toEqual(['store-01']);
    expect((await t.request('GET', '/v1/nodes?provision_state=active')).body.nodes).toEqual([]);
    expect((await t.request('GET', '/v1/nodes?maintenance=false')).body.nodes.length).toBeGreaterThan(0);
    expect((await t.request('GET', '/v1/nodes?maintenance=maybe')).status).toBe(400);
  });

  it('keeps the nodes matching a requirement expression, within what the caller may see', async () => {
    expect(names((await t.request('GET', `/v1/nodes?where=${encodeURIComponent('gpus >= 2 or disk >= 4TB')}`)).body)).toEqual(['gpu-02', 'store-01']);
    const asPhysics = await t.request('GET', `/v1/nodes?where=${encodeURIComponent('memory >= 64GiB')}`, { token: physics.token });
    expect(names(asPhysics.body)).toEqual(['gpu-01', 'gpu-02']);
    expect((await t.request('GET', `/v1/nodes?where=${encodeURIComponent('gpus >= 100')}`)).body.nodes).toEqual([]);
  });

  it('answers a bad requirement expression with a 400 naming the position, like lease groups do', async () => {
    const bad = await t.request('GET', `/v1/nodes?where=${encodeURIComponent('gpus >=')}`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_request', details: { field: 'where' } });
    expect(bad.body.error.message).toMatch(/position|column|at /i);
    const unknown = await t.request('GET', `/v1/nodes?where=${encodeURIComponent('colour == "red"')}`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('colour');
  });

  it('pages through nodes with limit and next', async () => {
    const first = await t.request('GET', '/v1/nodes?limit=2');
    expect(first.body.nodes).toHaveLength(2);
    expect(first.body.next).toMatch(/^\/v1\/nodes\?limit=2&marker=/);
    const all: string[] = [...names(first.body)];
    let next = first.body.next;
    while (next) {
      const page = await t.request('GET', next);
      all.push(...names(page.body));
      next = page.body.next;
    }
    expect(all).toEqual(names((await t.request('GET', '/v1/nodes?limit=1000')).body));
  });
});
