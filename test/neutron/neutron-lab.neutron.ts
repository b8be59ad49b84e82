/**
 * Self-test of the Neutron lab (scripts/neutron-standalone.sh, test/support/neutron.ts): with a real Keystone, a real
 * Neutron (ML2 baremetal, ironic-neutron-agent) and a real Ironic with the neutron network interface, it proves what
 * Leasehold's tenant networks (issue 14) rely on, and pins down the answers Leasehold must handle.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAB, neutronAvailable, startNeutronLab, type NeutronLab, type NeutronNetwork, type NeutronPort } from '../support/neutron.js';
import type { KeystoneProject, KeystoneUser } from '../support/keystone.js';

const avail = neutronAvailable();

/** Neutron's generated MACs start with its base_mac (fa:16:3e by default); Ironic's are the node's NICs. */
const NEUTRON_MAC = /^fa:16:3e:/;

/** Ironic's error body `{"error_message": "{\"faultstring\": …}"}` → the faultstring. */
function faultstring(body: unknown): string {
  const msg = (body as { error_message?: string } | null)?.error_message ?? '';
  try {
    return (JSON.parse(msg) as { faultstring: string }).faultstring;
  } catch {
    return msg;
  }
}

async function timed<T>(what: string, f: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const out = await f();
  console.log(`[neutron] ${what}: ${Math.round(performance.now() - t0)} ms`);
  return out;
}

describe.skipIf(!avail.ok)('the Neutron lab (Keystone, Neutron with ML2 baremetal and ironic-neutron-agent, Ironic)', () => {
  let lab: NeutronLab;
  let lessee: KeystoneProject;
  let other: KeystoneProject;
  let lesseeToken: string;
  let otherToken: string;
  /** Ironic nodes: two deployed (`active`), one left `available`. */
  let node: { bind: string; trunk: string; idle: string };
  let net: NeutronNetwork;

  beforeAll(async () => {
    lab = await startNeutronLab();
    console.log(`[neutron] lab up: ${JSON.stringify(lab.timings)}; Neutron ${JSON.stringify(lab.neutron.timings)}`);
    const t0 = performance.now();
    lessee = await lab.keystone.createProject('lessee-x');
    other = await lab.keystone.createProject('other-y');
    const member = (name: string, project: KeystoneProject): Promise<KeystoneUser> =>
      lab.keystone.createUser(name, { project: project.id, roles: ['member'] });
    lesseeToken = (await lab.keystone.issueToken({ user: await member('x-member', lessee), project: lessee.id })).token;
    otherToken = (await lab.keystone.issueToken({ user: await member('y-member', other), project: other.id })).token;
    const [bind, trunk, idle] = await lab.enrollNodes([{ name: 'n-bind' }, { name: 'n-trunk' }, { name: 'n-idle' }]);
    node = { bind: bind!, trunk: trunk!, idle: idle! };
    await Promise.all([lab.deployNode(node.bind), lab.deployNode(node.trunk)]);
    net = await lab.neutron.createNetwork('x-net', { token: lesseeToken });
    await lab.neutron.createSubnet(net.id, '192.168.10.0/24', { token: lesseeToken });
    console.log(`[neutron] fixtures (2 projects, 3 nodes enrolled, 2 deployed, a network): ${Math.round(performance.now() - t0)} ms`);
  });
  afterAll(async () => {
    if (lab) await timed('lab stop', () => lab.stop());
  });

  it("gives a project's network a VLAN on physnet1 with a segmentation id from the configured range", async () => {
    expect(net.project_id).toBe(lessee.id);
    expect(net['provider:segmentation_id']).toBeUndefined(); // provider attributes are the admin's
    const seen = await lab.neutron.getNetwork(net.id);
    expect(seen['provider:network_type']).toBe('vlan');
    expect(seen['provider:physical_network']).toBe(LAB.physnet);
    expect(seen['provider:segmentation_id']).toBeGreaterThanOrEqual(LAB.vlanMin);
    expect(seen['provider:segmentation_id']).toBeLessThanOrEqual(LAB.vlanMax);
  });

  it('binds a port attached as a VIF to an active node (ACTIVE, vif_type other, host the node) and unbinds it on detach', async () => {
    const port = await lab.neutron.createPort(net.id, { token: lesseeToken, name: 'x-port' });
    expect(port['binding:host_id']).toBeUndefined(); // binding attributes are the admin's too
    expect(await lab.neutron.getPort(port.id)).toMatchObject({ status: 'DOWN', 'binding:vif_type': 'unbound', 'binding:host_id': '' });
    await timed('agent reported the node', () => lab.waitForAgent(node.bind));
    expect((await timed('VIF attach on active', () => lab.attachVif(node.bind, port.id))).status).toBe(204);
    const bound = await lab.neutron.waitForPort(port.id, (p) => p.status === 'ACTIVE', 'ACTIVE');
    const ironicPorts = (
      await lab.ironic.request<{ ports: Array<{ address: string; local_link_connection: Record<string, string> }> }>(
        'GET',
        `/v1/ports?node=${node.bind}&fields=address,local_link_connection`,
      )
    ).body.ports;
    expect(bound).toMatchObject({
      status: 'ACTIVE',
      'binding:vif_type': 'other',
      'binding:vnic_type': 'baremetal',
      'binding:host_id': node.bind,
      mac_address: ironicPorts[0]!.address,
      // Ironic 21.4 sets neither: what tells an attached port is binding:host_id (and Ironic's VIF list).
      device_id: '',
      device_owner: '',
    });
    expect(bound['binding:vif_details']).toMatchObject({ bound_drivers: { 0: 'baremetal' } });
    // What a switch driver would configure: Ironic copies the node's port's local_link_connection.
    expect((bound['binding:profile'] as { local_link_information: unknown[] }).local_link_information).toEqual([
      ironicPorts[0]!.local_link_connection,
    ]);
    expect(ironicPorts[0]!.local_link_connection).toMatchObject({ switch_id: LAB.switchId, switch_info: LAB.switchInfo });
    expect(await lab.listVifs(node.bind)).toEqual([port.id]);

    expect((await timed('VIF detach on active', () => lab.detachVif(node.bind, port.id))).status).toBe(204);
    const unbound = await lab.neutron.getPort(port.id);
    expect(unbound).toMatchObject({ status: 'DOWN', 'binding:vif_type': 'unbound', 'binding:host_id': '', 'binding:profile': {} });
    expect(unbound.mac_address).toMatch(NEUTRON_MAC); // on an active node Ironic gives the MAC back
    expect(await lab.listVifs(node.bind)).toEqual([]);
  });

  it("keeps the node's MAC on a port detached from an available node: another port of that network is refused (500) until the old one is deleted", async () => {
    const first = await lab.neutron.createPort(net.id, { token: lesseeToken, name: 'x-first' });
    const second = await lab.neutron.createPort(net.id, { token: lesseeToken, name: 'x-second' });
    const nodeMac = (await lab.ironic.request<{ ports: Array<{ address: string }> }>('GET', `/v1/ports?node=${node.idle}`)).body.ports[0]!.address;

    expect((await timed('VIF attach on available', () => lab.attachVif(node.idle, first.id))).status).toBe(204);
    // Not active: Ironic only takes the MAC; binding waits for a deploy (which fake deploy never does).
    expect(await lab.neutron.getPort(first.id)).toMatchObject({ mac_address: nodeMac, status: 'DOWN', 'binding:vif_type': 'unbound' });
    expect((await timed('VIF detach on available', () => lab.detachVif(node.idle, first.id))).status).toBe(204);
    expect((await lab.neutron.getPort(first.id)).mac_address).toBe(nodeMac); // gotcha 6: not given back

    const refused = await lab.attachVif(node.idle, second.id, { expect: [500] });
    const text = faultstring(refused.body);
    console.log(`[neutron] attach of a second port after a detach on an available node: ${refused.status} ${text}`);
    expect(text).toBe(
      `Unable to attach VIF ${second.id} because Ironic can not update Neutron port ${second.id} MAC address to match` +
        ` physical MAC address ${nodeMac}`,
    );
    expect(await lab.listVifs(node.idle)).toEqual([]);
    expect((await lab.neutron.getPort(second.id)).mac_address).toBe(second.mac_address);

    await lab.neutron.deletePort(first.id, { token: lesseeToken });
    expect((await lab.attachVif(node.idle, second.id)).status).toBe(204);
    expect((await lab.neutron.getPort(second.id)).mac_address).toBe(nodeMac);
    expect((await lab.detachVif(node.idle, second.id)).status).toBe(204);
  });

  it('creates a trunk with a VLAN-tagged subport whose parent binds on an active node; the subport stays unbound and the trunk DOWN', async () => {
    const tagged = await lab.neutron.createNetwork('x-tagged', { token: lesseeToken });
    await lab.neutron.createSubnet(tagged.id, '192.168.20.0/24', { token: lesseeToken });
    const parent = await lab.neutron.createPort(net.id, { token: lesseeToken, name: 'x-parent' });
    const sub = await lab.neutron.createPort(tagged.id, { token: lesseeToken, name: 'x-sub' });
    const trunk = await lab.neutron.createTrunk(parent.id, [{ port_id: sub.id, segmentation_type: 'vlan', segmentation_id: 42 }], {
      token: lesseeToken,
      name: 'x-trunk',
    });
    expect(trunk).toMatchObject({ port_id: parent.id, project_id: lessee.id, status: 'DOWN' });
    expect(trunk.sub_ports).toEqual([{ port_id: sub.id, segmentation_type: 'vlan', segmentation_id: 42 }]);

    await lab.waitForAgent(node.trunk);
    expect((await timed('VIF attach of a trunk parent on active', () => lab.attachVif(node.trunk, parent.id))).status).toBe(204);
    const bound: NeutronPort = await lab.neutron.waitForPort(parent.id, (p) => p.status === 'ACTIVE', 'ACTIVE');
    expect(bound).toMatchObject({ 'binding:vif_type': 'other', 'binding:host_id': node.trunk });
    expect(bound.trunk_details?.sub_ports).toEqual([{ port_id: sub.id, segmentation_type: 'vlan', segmentation_id: 42, mac_address: sub.mac_address }]);
    // Nothing wires subports here: Ironic 21.4 has no trunk code, networking-baremetal 6.0 no trunk driver.
    expect(await lab.neutron.getPort(sub.id)).toMatchObject({ status: 'DOWN', 'binding:vif_type': 'unbound', 'binding:host_id': '' });
    expect((await lab.neutron.getTrunk(trunk.id)).status).toBe('DOWN');
    expect((await lab.detachVif(node.trunk, parent.id)).status).toBe(204);
  });

  it("hides a project's network and ports from another project's member (404, not listed) but not from the service user", async () => {
    const port = await lab.neutron.createPort(net.id, { token: lesseeToken, name: 'x-private' });
    const asOther = { token: otherToken, expect: [404] };
    expect((await lab.neutron.request('GET', `/networks/${net.id}`, undefined, asOther)).status).toBe(404);
    expect((await lab.neutron.request('GET', `/ports/${port.id}`, undefined, asOther)).status).toBe(404);
    expect((await lab.neutron.listNetworks({}, { token: otherToken })).map((n) => n.id)).not.toContain(net.id);
    expect((await lab.neutron.listPorts({}, { token: otherToken })).map((p) => p.id)).not.toContain(port.id);
    // Neutron's service user (admin on project service): what Leasehold's tenant-network code will call as.
    expect((await lab.neutron.getNetwork(net.id)).project_id).toBe(lessee.id);
    expect((await lab.neutron.getPort(port.id)).project_id).toBe(lessee.id);
    expect((await lab.neutron.listPorts({ network_id: net.id })).map((p) => p.id)).toContain(port.id);

    // …and creates networks in a project (project_id) as Leasehold could: the project's member sees it as its own.
    const { network: made } = await lab.neutron.createVlanNetwork('x-by-service', '192.168.30.0/24', { projectId: lessee.id });
    expect(made.project_id).toBe(lessee.id);
    expect(made['provider:segmentation_id']).not.toBe((await lab.neutron.getNetwork(net.id))['provider:segmentation_id']);
    expect((await lab.neutron.getNetwork(made.id, { token: lesseeToken })).project_id).toBe(lessee.id);
  });

  it("shows a network shared with one project (RBAC access_as_shared) to that project's member", async () => {
    const shared = await lab.neutron.createNetwork('x-shared', { token: lesseeToken });
    await lab.neutron.shareNetwork(shared.id, other.id, { token: lesseeToken });
    const seen = await lab.neutron.getNetwork(shared.id, { token: otherToken });
    expect(seen).toMatchObject({ id: shared.id, project_id: lessee.id, shared: true });
    const port = await lab.neutron.createPort(shared.id, { token: otherToken, name: 'y-on-shared' });
    expect(port.project_id).toBe(other.id);
  });
});
