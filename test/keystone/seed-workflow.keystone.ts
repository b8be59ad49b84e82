/**
 * The seed workflow in an OpenStack cloud (issue 13): Keystone users of owner and lessee projects, with their
 * Keystone credentials only, through Leasehold's API, the `leasehold` CLI on OS_CLOUD and the unmodified
 * `openstack baremetal` CLI, which finds Leasehold as the catalog's public `baremetal` endpoint. Leasehold reaches
 * the real Ironic (auth_strategy = keystone) through the catalog's internal endpoint with its service user, and
 * Ironic's owner/lessee fields hold Keystone project ids.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/http.js';
import { ironicAvailable } from '../support/ironic.js';
import { IronicWatch, availableAgain, nodeSpec } from '../support/ironic-leasehold.js';
import { keystoneAvailable } from '../support/keystone.js';
import { startKeystoneCloud, type CloudUser, type KeystoneCloud, type Run } from '../support/keystone-leasehold.js';
import { cli, cliJson } from '../support/processes.js';
import { PROMPTLY_MS } from '../support/timing.js';

const avail = keystoneAvailable().ok && ironicAvailable().ok;

const NODES = [
  nodeSpec('gpu-1', { memory_gib: 64, cpus: 32, local_gb: 480, gpus: 1 }, { owner: 'physics-lab', traits: ['CUSTOM_GPU_A100'] }),
  nodeSpec('gpu-2', { memory_gib: 128, cpus: 48, local_gb: 960, gpus: 2 }, { owner: 'physics-lab', traits: ['CUSTOM_GPU_A100'] }),
  nodeSpec('gpu-big', { memory_gib: 1024, cpus: 128, local_gb: 3840, gpus: 8 }, { owner: 'physics-lab', traits: ['CUSTOM_GPU_H100'] }),
  nodeSpec('gpu-3', { memory_gib: 96, cpus: 32, local_gb: 480, gpus: 1 }, { owner: 'bio-lab', traits: ['CUSTOM_GPU_L40S'] }),
  nodeSpec('disk-1', { memory_gib: 16, cpus: 16, local_gb: 4000 }, { owner: 'bio-lab', traits: ['CUSTOM_NVME'] }),
  nodeSpec('disk-big', { memory_gib: 1024, cpus: 96, local_gb: 2000, arch: 'aarch64' }, { owner: 'bio-lab', traits: ['CUSTOM_NVME'] }),
];
const LEASED = ['disk-1', 'gpu-1', 'gpu-2', 'gpu-3'];
const NEED = ['--need', '3:memory >= 48GiB and gpus >= 1', '--need', '1:memory >= 16GiB and disk >= 1TB'];

const names = (run: Run): string[] => {
  if (run.code !== 0) throw new Error(`openstack exited ${run.code}: ${run.stderr}`);
  return (JSON.parse(run.stdout) as Array<{ Name: string }>).map((n) => n.Name).sort();
};

describe.skipIf(!avail)('Leasehold in front of a Keystone cloud: the seed workflow with Keystone credentials only', () => {
  let cloud: KeystoneCloud;
  let watch: IronicWatch;
  const as: Record<string, CloudUser> = {};
  let leaseId = '';

  beforeAll(async () => {
    cloud = await startKeystoneCloud({ nodes: NODES });
    as.pat = await cloud.user('pat', 'physics-lab', 'member');
    as.bo = await cloud.user('bo', 'bio-lab', 'manager');
    as.ada = await cloud.user('ada', 'astro', 'member');
    as.rita = await cloud.user('rita', 'astro', 'reader');
    as.gil = await cloud.user('gil', 'geo', 'member');
    as.root = await cloud.user('root', null); // the cloud's system-scoped admin
    watch = new IronicWatch(cloud.ironic, 50).start();
  }, 300_000);
  afterAll(async () => {
    await watch?.stop();
    await cloud?.stop();
  });

  it("knows each caller from its Keystone token: project, role, and the operator from a system or admin-project admin", async () => {
    const astro = await cloud.project('astro');
    const me = await as.ada!.api.ok('GET', '/v1/me');
    expect(me).toMatchObject({ identity: 'keystone', user: { name: 'ada', role: 'member', project_id: astro.id }, project: { id: astro.id, name: 'astro' } });
    expect((await as.rita!.api.ok('GET', '/v1/me')).user.role).toBe('reader');
    expect((await as.bo!.api.ok('GET', '/v1/me')).user.role).toBe('manager');
    expect((await as.root!.api.ok('GET', '/v1/me')).user.role).toBe('admin');
    expect((await cloud.admin.api.ok('GET', '/v1/me')).user.role).toBe('admin');
    const ready = await as.ada!.api.call('GET', '/readyz');
    expect(ready.status).toBe(200);

    // Identity is Keystone's: Leasehold's own users and tokens are not made here; quotas stay Leasehold's.
    const made = await cloud.admin.api.call('POST', '/v1/users', { name: 'eve', project_id: astro.id, role: 'member' });
    expect(made.status).toBe(409);
    expect(made.body.error.message).toMatch(/managed by Keystone/);
    const quota = await as.root!.api.ok('PATCH', `/v1/projects/${astro.id}`, { quota: { max_nodes: 4 } });
    expect(quota.quota.max_nodes).toBe(4);
    expect((await as.ada!.api.call('PATCH', `/v1/projects/${astro.id}`, { quota: { max_nodes: 40 } })).status).toBe(403);
  });

  it("lists Ironic's nodes with Keystone project ids as owners, each owner its own, through the API and the catalog", async () => {
    const physics = await cloud.project('physics-lab');
    const all = (await cloud.admin.api.ok('GET', '/v1/nodes')).nodes as Array<{ name: string; owner: string }>;
    expect(all.map((n) => n.name).sort()).toEqual(NODES.map((n) => n.name).sort());
    expect(all.find((n) => n.name === 'gpu-1')!.owner).toBe(physics.id);

    const mine = await cliJson(['node', 'list'], as.pat!.env); // `leasehold` with OS_CLOUD only: Keystone, then the catalog
    expect(mine.nodes.map((n: { name: string }) => n.name).sort()).toEqual(['gpu-1', 'gpu-2', 'gpu-big']);
    expect(mine.nodes[0].owner_project).toEqual({ id: physics.id, name: 'physics-lab' });

    expect(names(await as.pat!.openstack(['baremetal', 'node', 'list', '-f', 'json']))).toEqual(['gpu-1', 'gpu-2', 'gpu-big']);
    expect(names(await as.gil!.openstack(['baremetal', 'node', 'list', '-f', 'json']))).toEqual([]);
    expect(names(await as.root!.openstack(['baremetal', 'node', 'list', '-f', 'json']))).toEqual(NODES.map((n) => n.name).sort());
  });

  it('walks the seed workflow: offers, a reader refused, the 3 + 1 lease, the lessee project in Ironic at once', async () => {
    for (const spec of NODES) {
      const owner = spec.name.startsWith('gpu-3') || spec.name.startsWith('disk') ? as.bo! : as.pat!;
      await cliJson(['offer', 'create', spec.name, '--max-lease', '5d'], owner.env);
    }
    const reader = await cli(['lease', 'create', ...NEED, '--for', '1d'], as.rita!.env);
    expect(reader.code).toBe(1);
    expect(reader.stderr).toMatch(/forbidden|not allowed|reader/i);
    expect(await cliJson(['lease', 'quote', ...NEED, '--for', '1d'], as.rita!.env)).toMatchObject({ allocations: expect.any(Array) });

    const lease = await cliJson(['lease', 'create', '--name', 'seed', ...NEED, '--for', '10m', '--wait', '--wait-timeout', '30s'], as.ada!.env);
    leaseId = lease.id;
    const astro = await cloud.project('astro');
    expect(lease).toMatchObject({ state: 'active', project_id: astro.id });
    expect(lease.allocations.map((a: { node_name: string }) => a.node_name).sort()).toEqual(LEASED);
    const start = Date.parse(lease.start);
    const seen = await watch.waitForAll(LEASED.map((n) => cloud.uuid[n]!), (n) => n.lessee === astro.id, {
      since: start - 1_000,
      timeoutMs: 10_000,
      what: "with the lessee's Keystone project",
    });
    for (const t of seen) expect(t - start).toBeLessThan(PROMPTLY_MS);
    expect(watch.latest(cloud.uuid['gpu-big']!)!.lessee).toBeNull();

    // Ironic's own policy agrees: the lessee's token, straight to Ironic, sees exactly the leased nodes.
    const direct = await cloud.ironic.request('GET', '/v1/nodes?fields=name', undefined, { token: as.ada!.token });
    expect((direct.body.nodes as Array<{ name: string }>).map((n) => n.name).sort()).toEqual(LEASED);
  });

  it("lets the lessee power and deploy with `openstack baremetal` through the catalog; a reader reads, an outsider sees nothing", async () => {
    expect(names(await as.ada!.openstack(['baremetal', 'node', 'list', '-f', 'json']))).toEqual(LEASED);
    const on = await as.ada!.openstack(['baremetal', 'node', 'power', 'on', 'gpu-1']);
    expect(on.code, on.stderr).toBe(0);
    await until(async () => (await cloud.ironic.getNode(cloud.uuid['gpu-1']!)).power_state === 'power on', 10_000, 'gpu-1 on in Ironic');
    const deploy = await as.ada!.openstack(['baremetal', 'node', 'deploy', 'gpu-2']);
    expect(deploy.code, deploy.stderr).toBe(0);
    await until(async () => (await cloud.ironic.getNode(cloud.uuid['gpu-2']!)).provision_state === 'active', 20_000, 'gpu-2 deployed in Ironic');
    const shown = JSON.parse((await as.ada!.openstack(['baremetal', 'node', 'show', 'gpu-2', '-f', 'json'])).stdout);
    expect(shown).toMatchObject({ name: 'gpu-2', provision_state: 'active', lessee: (await cloud.project('astro')).id });

    expect(names(await as.rita!.openstack(['baremetal', 'node', 'list', '-f', 'json']))).toEqual(LEASED);
    const readerPower = await as.rita!.openstack(['baremetal', 'node', 'power', 'off', 'gpu-1']);
    expect(readerPower.code).not.toBe(0);
    expect(readerPower.stderr).toMatch(/HTTP 403/);
    expect((await as.rita!.api.call('POST', `/v1/nodes/${cloud.uuid['gpu-1']}/power`, { action: 'off' })).status).toBe(403);

    expect((await as.gil!.openstack(['baremetal', 'node', 'show', 'gpu-1'])).stderr).toMatch(/HTTP 404/);
    expect((await as.gil!.openstack(['baremetal', 'node', 'power', 'off', 'gpu-1'])).stderr).toMatch(/HTTP 404/);
    expect((await as.gil!.api.call('GET', `/v1/nodes/${cloud.uuid['gpu-1']}`)).status).toBe(404);
    expect((await as.gil!.api.ok('GET', '/v1/leases')).leases).toEqual([]);
  });

  it("gives the lessee a console token under Keystone (Leasehold's own, decided by the same policy), and nobody else", async () => {
    const opened = await as.ada!.api.call('POST', `/v1/nodes/${cloud.uuid['gpu-1']}/console`);
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    expect(opened.body.url).toMatch(/^ws:\/\//);
    expect((await as.ada!.api.ok('GET', `/v1/consoles/${opened.body.id}`)).node_id).toBe(cloud.uuid['gpu-1']);
    expect((await as.gil!.api.call('GET', `/v1/consoles/${opened.body.id}`)).status).toBe(404);
    expect((await as.rita!.api.call('POST', `/v1/nodes/${cloud.uuid['gpu-1']}/console`)).status).toBe(403);
    expect((await as.gil!.api.call('POST', `/v1/nodes/${cloud.uuid['gpu-1']}/console`)).status).toBe(404);
  });

  it('ends the lease: no access left through Leasehold or the catalog, Ironic forgets the lessee, the nodes are cleaned back to the pool', async () => {
    const before = Object.fromEntries(LEASED.map((n) => [n, watch.latest(cloud.uuid[n]!)]));
    const ended = await cliJson(['lease', 'cancel', leaseId], as.ada!.env);
    const end = Date.parse(ended.end);

    expect((await as.ada!.api.call('GET', `/v1/nodes/${cloud.uuid['gpu-1']}`)).status).toBe(404);
    expect((await as.ada!.api.call('POST', `/v1/nodes/${cloud.uuid['gpu-1']}/power`, { action: 'on' })).status).toBe(404);
    const gone = await as.ada!.openstack(['baremetal', 'node', 'show', 'gpu-1']);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toMatch(/HTTP 404/);
    expect(names(await as.ada!.openstack(['baremetal', 'node', 'list', '-f', 'json']))).toEqual([]);
    expect((await as.ada!.api.call('POST', `/v1/nodes/${cloud.uuid['gpu-1']}/console`)).status).toBe(404);

    await watch.waitForAll(LEASED.map((n) => cloud.uuid[n]!), (n) => n.lessee === null, { since: end, timeoutMs: 10_000, what: 'lessee cleared' });
    await Promise.all(
      LEASED.map((n) => watch.waitFor(cloud.uuid[n]!, availableAgain(before[n]), { since: end, timeoutMs: 60_000, what: `${n} cleaned and available` })),
    );
    // The deployed node is undeployed (tear down, then Ironic's automated cleaning); the others are cleaned.
    const cleaning = await cloud.admin.api.events({ lease_id: leaseId, type: 'node.cleaning_started' });
    expect(cleaning.map((e) => e.node_id).sort()).toEqual(['disk-1', 'gpu-1', 'gpu-3'].map((n) => cloud.uuid[n]).sort());
    const undeployed = await cloud.admin.api.events({ lease_id: leaseId, type: 'node.undeploy' });
    expect(undeployed.map((e) => e.node_id)).toEqual([cloud.uuid['gpu-2']]);
    await until(async () => (await as.ada!.api.ok('GET', `/v1/leases/${leaseId}`)).state === 'ended', 30_000, 'the lease shows ended');
    const gpu2 = await cloud.ironic.getNode(cloud.uuid['gpu-2']!);
    expect(gpu2).toMatchObject({ provision_state: 'available', lessee: null, instance_uuid: null });

    // Ironic's own view agrees for a lessee who talks to it directly (with a token Ironic has not cached).
    const fresh = await cloud.keystone.issueToken({ user: as.ada!.user, project: as.ada!.project!.id });
    const direct = await cloud.ironic.request('GET', '/v1/nodes?fields=name', undefined, { token: fresh.token });
    expect(direct.body.nodes).toEqual([]);
  });
});
