import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedNetworks } from '../../src/drivers/simulated/simulated-networks.js';
import { createProjectUser, NODE_IDS, startApp, type TestApp } from '../support/test-app.js';

let t: TestApp;
let sim: SimulatedNetworks;
let owner: { projectId: string; token: string };
let lessee: { projectId: string; token: string };
let reader: { projectId: string; token: string };
let stranger: { projectId: string; token: string };
let leaseId: string;
const net = { lab: '', data: '', other: '', shared: '', flat: '' };

beforeAll(async () => {
  t = await startApp();
  sim = t.networks as SimulatedNetworks;
  owner = await createProjectUser(t, 'physics-lab', 'member');
  lessee = await createProjectUser(t, 'astro', 'member');
  reader = await createProjectUser(t, 'astro', 'reader');
  stranger = await createProjectUser(t, 'geo', 'member');
  net.lab = sim.createNetwork({ name: 'astro-lab', project_id: lessee.projectId }).id;
  net.data = sim.createNetwork({ name: 'astro-data', project_id: lessee.projectId }).id;
  net.other = sim.createNetwork({ name: 'geo-secret', project_id: stranger.projectId }).id;
  net.shared = sim.createNetwork({ name: 'campus', project_id: stranger.projectId, shared_with: [lessee.projectId] }).id;
  net.flat = sim.createNetwork({ name: 'public', project_id: 'admin', shared: true, network_type: 'flat' }).id;
  for (const node of ['gpu-01', 'gpu-02']) {
    expect((await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: node } })).status).toBe(201);
  }
  const lease = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['gpu-01'], duration: '1d' } });
  expect(lease.status, JSON.stringify(lease.body)).toBe(201);
  leaseId = lease.body.id;
});
afterAll(async () => {
  await t.close();
});

const nics = async (token: string, node = 'gpu-01') => t.request('GET', `/v1/nodes/${node}/networks`, { token });

describe('tenant networks on a leased node', () => {
  it('a lessee lists the networks it may use: its own, the shared ones and those shared with it, with VLAN ids', async () => {
    const res = await t.request('GET', '/v1/networks', { token: lessee.token });
    expect(res.status).toBe(200);
    const names = res.body.networks.map((n: { name: string }) => n.name);
    expect(names).toEqual(['astro-data', 'astro-lab', 'campus', 'public']);
    expect(res.body.networks.find((n: { name: string }) => n.name === 'astro-lab')).toMatchObject({ network_type: 'vlan', physical_network: 'physnet1' });
    expect(typeof res.body.networks.find((n: { name: string }) => n.name === 'astro-lab').vlan).toBe('number');
    expect(res.body.networks.find((n: { name: string }) => n.name === 'public').vlan).toBeNull();
  });

  it('the lessee attaches its network by name: a port in its project, plugged into a free NIC, shown per NIC with its VLAN', async () => {
    const res = await t.request('POST', '/v1/nodes/gpu-01/networks', { token: lessee.token, body: { network: 'astro-lab' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ state: 'attached', project_id: lessee.projectId, port_created: true, lease_id: leaseId, network: { id: net.lab, name: 'astro-lab' } });
    const port = await sim.getPort(res.body.port_id);
    expect(port).toMatchObject({ project_id: lessee.projectId, network_id: net.lab, mac: res.body.nic.mac });

    const list = await nics(lessee.token);
    expect(list.status).toBe(200);
    expect(list.body.nics).toHaveLength(2);
    const used = list.body.nics.find((n: { in_use: boolean }) => n.in_use);
    expect(used).toMatchObject({ mac: res.body.nic.mac, physical_network: 'physnet1', attachment: { port_id: res.body.port_id, binding: 'unbound', network: { name: 'astro-lab' } } });
    expect(used.attachment.network.vlan).toBe((await sim.getNetwork(net.lab))!.segmentation_id);
  });

  it('the port binds once the node is deployed, as Neutron binds it to the switch port', async () => {
    await t.driver.setProvisionState(NODE_IDS.gpuSmall, 'active');
    await t.clock.advance(1_000);
    await new Promise((r) => setTimeout(r, 20));
    const used = (await nics(lessee.token)).body.nics.find((n: { in_use: boolean }) => n.in_use);
    expect(used.attachment).toMatchObject({ binding: 'bound', port_status: 'ACTIVE' });
  });

  it("another project's network, or a port of another project, is a 404 — through the REST API", async () => {
    const other = await t.request('POST', '/v1/nodes/gpu-01/networks', { token: lessee.token, body: { network: 'geo-secret' } });
    expect(other.status).toBe(404);
    expect(other.body.error).toMatchObject({ code: 'not_found', details: { resource: 'network' } });
    const byId = await t.request('POST', '/v1/nodes/gpu-01/networks', { token: lessee.token, body: { network: net.other } });
    expect(byId.status).toBe(404);
    const theirs = await sim.createPort({ network_id: net.shared, project_id: stranger.projectId, name: 'theirs' });
    const port = await t.request('POST', '/v1/nodes/gpu-01/networks', { token: lessee.token, body: { port: theirs.id } });
    expect(port.status).toBe(404);
    expect(port.body.error.details).toMatchObject({ resource: 'port' });
  });

  it('bad input is a clear 4xx and leaves nothing behind: no such MAC, a NIC in use, no free NIC, not a MAC', async () => {
    const before = (await sim.listNetworks(null)).length;
    const portsBefore = await countPorts();
    const nicsNow = (await nics(lessee.token)).body.nics as Array<{ mac: string; in_use: boolean }>;
    const used = nicsNow.find((n) => n.in_use)!;
    const free = nicsNow.find((n) => !n.in_use)!;
    const noMac = await t.request('POST', '/v1/nodes/gpu-01/networks', { token: lessee.token, body: { network: 'astro-data', mac: '00:11:22:33:44:55' } });
    expect(noMac.status).toBe(400);
    expect(noMac.body.error.message).toContain('has no NIC with MAC 00:11:22:33:44:55');
    const inUse = await t.request('POST', '/v1/nodes/gpu-01/networks', { token: lessee.token, body: { network: 'astro-data', mac: used.mac.toUpperCase() } });
    expect(inUse.status).toBe(409);
    const notMac = await t.request('POST', '/v1/nodes/gpu-01/networks', { token: lessee.token, body: { network: 'astro-data', mac: 'not-a-mac' } });
    expect(notMac.status).toBe(400);
    const nothing = await t.request('POST', '/v1/nodes/gpu-01/networks', { token: lessee.token, body: {} });
    expect(nothing.status).toBe(400);
    const onFree = await t.request('POST', '/v1/nodes/gpu-01/networks', { token: lessee.token, body: { network: 'campus', mac: free.mac } });
    expect(onFree.status, JSON.stringify(onFree.body)).toBe(201);
    const full = await t.request('POST', '/v1/nodes/gpu-01/networks', { token: lessee.token, body: { network: 'astro-data' } });
    expect(full.status).toBe(409);
    expect(full.body.error.message).toContain('no free NIC');
    expect(await countPorts()).toBe(portsBefore + 1);
    expect((await sim.listNetworks(null)).length).toBe(before);
    const detached = await t.request('DELETE', '/v1/nodes/gpu-01/networks/campus', { token: lessee.token });
    expect(detached.status, JSON.stringify(detached.body)).toBe(200);
    expect(detached.body).toMatchObject({ state: 'detached', network: { name: 'campus' } });
    expect(await countPorts()).toBe(portsBefore);
  });

  it('a failed attach deletes the port it created (Ironic refuses the VIF)', async () => {
    const portsBefore = await countPorts();
    t.driver.setFaults({ unavailable: true });
    try {
      // listNics fails first: nothing was created.
      expect((await t.request('POST', '/v1/nodes/gpu-01/networks', { token: lessee.token, body: { network: 'astro-data' } })).status).toBe(503);
    } finally {
      t.driver.clearFaults();
    }
    const original = t.driver.attachVif.bind(t.driver);
    t.driver.attachVif = async () => {
      throw new (await import('../../src/domain/errors.js')).InvalidRequestError('Unable to attach VIF: the switch said no');
    };
    try {
      const res = await t.request('POST', '/v1/nodes/gpu-01/networks', { token: lessee.token, body: { network: 'astro-data' } });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain('the switch said no');
    } finally {
      t.driver.attachVif = original;
    }
    expect(await countPorts()).toBe(portsBefore);
    const events = await t.request('GET', '/v1/events?type=node.network_attach_failed', { token: lessee.token });
    expect(events.body.events[0].message).toContain('the switch said no');
  });

  it('a reader sees the NICs but may not attach; a stranger does not see the node; the owner sees everything', async () => {
    expect((await nics(reader.token)).status).toBe(200);
    const refused = await t.request('POST', '/v1/nodes/gpu-01/networks', { token: reader.token, body: { network: 'astro-data' } });
    expect(refused.status).toBe(403);
    expect((await nics(stranger.token)).status).toBe(404);
    expect((await t.request('POST', '/v1/nodes/gpu-01/networks', { token: stranger.token, body: { network: 'geo-secret' } })).status).toBe(404);
    const seen = (await nics(owner.token)).body.nics.find((n: { in_use: boolean }) => n.in_use);
    expect(seen.attachment).toMatchObject({ project_id: lessee.projectId, network: { name: 'astro-lab' } });
  });

  it('a trunk carries tagged networks on their VLANs; tagged networks are added and removed later', async () => {
    await t.request('DELETE', '/v1/nodes/gpu-01/networks/astro-lab', { token: lessee.token });
    const res = await t.request('POST', '/v1/nodes/gpu-01/networks', { token: lessee.token, body: { network: 'public', tagged: ['astro-lab'] } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.trunk.tagged).toEqual([expect.objectContaining({ network: expect.objectContaining({ name: 'astro-lab' }), port_created: true })]);
    const trunk = await sim.getTrunk(res.body.trunk.id);
    expect(trunk!.subports).toEqual([expect.objectContaining({ segmentation_id: (await sim.getNetwork(net.lab))!.segmentation_id })]);

    const added = await t.request('POST', `/v1/nodes/gpu-01/networks/${res.body.id}/tagged`, { token: lessee.token, body: { networks: ['astro-data'] } });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body.trunk.tagged.map((x: { network: { name: string } }) => x.network.name)).toEqual(['astro-lab', 'astro-data']);
    expect((await sim.getTrunk(res.body.trunk.id))!.subports).toHaveLength(2);
    const removed = await t.request('DELETE', `/v1/nodes/gpu-01/networks/${res.body.id}/tagged/astro-lab`, { token: lessee.token });
    expect(removed.status).toBe(200);
    expect((await sim.getTrunk(res.body.trunk.id))!.subports).toHaveLength(1);
    const flatTagged = await t.request('POST', '/v1/nodes/gpu-01/networks', { token: lessee.token, body: { network: 'astro-lab', tagged: ['public'] } });
    expect(flatTagged.status).toBe(400);
    expect(flatTagged.body.error.message).toContain('has no VLAN id');
  });

  it('access to the network endpoints ends at the lease end instant', async () => {
    const lease = await t.request('GET', `/v1/leases/${leaseId}`, { token: lessee.token });
    await t.clock.advanceTo(new Date(lease.body.end));
    expect((await nics(lessee.token)).status).toBe(404);
    expect((await t.request('POST', '/v1/nodes/gpu-01/networks', { token: lessee.token, body: { network: 'astro-data' } })).status).toBe(404);
    expect((await t.request('DELETE', '/v1/nodes/gpu-01/networks/public', { token: lessee.token })).status).toBe(404);
  });
});

describe('when the network service is away', () => {
  it('the network endpoints answer 503 with Retry-After, /readyz names it, and both recover', async () => {
    const app = await startApp();
    const sim = app.networks as SimulatedNetworks;
    try {
      sim.setUnavailable(true);
      const list = await app.request('GET', '/v1/networks');
      expect(list.status).toBe(503);
      expect(list.body.error.code).toBe('backend_unavailable');
      expect(list.headers.get('retry-after')).toBe('1');
      const ready = await app.request('GET', '/readyz', { token: null });
      expect(ready.status).toBe(503);
      expect(ready.body.error.details.checks['networks (simulated)']).toContain('unavailable');
      sim.setUnavailable(false);
      expect((await app.request('GET', '/v1/networks')).status).toBe(200);
      expect((await app.request('GET', '/readyz', { token: null })).body.checks).toMatchObject({ 'networks (simulated)': 'ok' });
    } finally {
      await app.close();
    }
  });
});

describe('without a network service', () => {
  it('every network endpoint answers 409 not_configured saying what to configure', async () => {
    const bare = await startApp({ networks: false });
    try {
      for (const [method, path] of [
        ['GET', '/v1/networks'],
        ['GET', '/v1/nodes/gpu-01/networks'],
        ['POST', '/v1/nodes/gpu-01/networks'],
      ] as const) {
        const res = await bare.request(method, path, method === 'POST' ? { body: { network: 'x' } } : {});
        expect(res.status, path).toBe(409);
        expect(res.body.error.code).toBe('not_configured');
        expect(res.body.error.message).toContain('not configured');
      }
    } finally {
      await bare.close();
    }
  });
});

async function countPorts(): Promise<number> {
  return sim.allPorts().length;
}
