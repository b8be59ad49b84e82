/**
 * The lab for tenant networks on leased nodes (issue 14), once per suite: a real Keystone (test/support/keystone.ts),
 * a real Neutron with ML2 `baremetal` and ironic-neutron-agent (test/support/neutron-standalone.ts), and an Ironic
 * in auth_strategy = keystone with the `neutron` network interface, in the order they need each other. Facts behind
 * it: shared/notes/openstack-lab.md (sections 5 and 6). Measured figures: scripts/neutron-standalone.sh's header.
 *
 *   const avail = neutronAvailable();
 *   describe.skipIf(!avail.ok)('with Neutron', () => {
 *     let lab: NeutronLab;
 *     beforeAll(async () => { lab = await startNeutronLab(); }, 600_000);
 *     afterAll(() => lab?.stop());
 *     it('…', async () => {
 *       const [node] = await lab.enrollNodes([{ name: 'n1' }]);
 *       await lab.deployNode(node!);                                      // active (fake deploy)
 *       const net = await lab.neutron.createNetwork('x', { token });      // VLAN on physnet1, 100-199
 *       const port = await lab.neutron.createPort(net.id, { token });
 *       await lab.waitForAgent(node!);                                    // else binding fails (gotcha 7)
 *       await lab.attachVif(node!, port.id);                              // → ACTIVE, vif_type other
 *     });
 *   });
 *
 * Outside CI a machine without Neutron (or Keystone, Ironic, MariaDB, RabbitMQ) skips loudly; under CI
 * (`process.env.CI` set) it is an error.
 */
import { randomBytes } from 'node:crypto';
import type { IronicHandle, IronicNode, IronicResponse } from './ironic.js';
import { startIronicWithKeystone, startKeystone, type KeystoneHandle } from './keystone.js';
import type { NeutronAgent, NeutronNetwork } from './neutron-api.js';
import { LAB, neutronAvailable, startNeutron, type NeutronHandle, type StartNeutronOptions } from './neutron-standalone.js';

export * from './neutron-api.js';
export * from './neutron-standalone.js';

export interface LabTimings {
  keystoneMs: number;
  /** Neutron and Ironic start side by side (neither needs the other to start). */
  neutronMs: number;
  ironicMs: number;
  /** The shared flat provider network and its subnet. */
  provisioningNetworkMs: number;
  agentMs: number;
  totalMs: number;
}

/** An Ironic node of the lab: fake-hardware, network_interface neutron, one or more ports on physnet1. */
export interface LabNodeSpec {
  name: string;
  /** Keystone project ids. */
  owner?: string;
  lessee?: string;
  /** Default one port with a random MAC on switch port Ethernet1/<n>. */
  ports?: Array<{ mac?: string; switchPort?: string }>;
}

export interface VifOptions {
  /** A Keystone token (a project user's) instead of Ironic's service user's. */
  token?: string;
  /** Statuses to return instead of throwing. */
  expect?: number[];
}

export interface NeutronLab {
  readonly keystone: KeystoneHandle;
  readonly neutron: NeutronHandle;
  readonly ironic: IronicHandle;
  /** The shared flat network on `provnet`: Ironic's cleaning and provisioning network. */
  readonly provisioningNetwork: NeutronNetwork;
  readonly timings: LabTimings;
  /** Enrols fake-hardware nodes with network_interface neutron and their ports, brings them to `available`. */
  enrollNodes(specs: LabNodeSpec[]): Promise<string[]>;
  /** Deploys a node (fake deploy, no image) and waits for `active`. */
  deployNode(id: string): Promise<IronicNode>;
  /** Undeploys (deleting → cleaning → available) and waits for `available`. */
  undeployNode(id: string): Promise<IronicNode>;
  /** POST /v1/nodes/{id}/vifs: 204 on success. */
  attachVif(nodeId: string, portId: string, opts?: VifOptions): Promise<IronicResponse>;
  /** DELETE /v1/nodes/{id}/vifs/{port}. */
  detachVif(nodeId: string, portId: string, opts?: VifOptions): Promise<IronicResponse>;
  listVifs(nodeId: string): Promise<string[]>;
  /** Until ironic-neutron-agent has reported the node (a port attached before that fails to bind). */
  waitForAgent(nodeId: string, timeoutMs?: number): Promise<NeutronAgent>;
  /** Stops the agent and Neutron, Ironic, Keystone; idempotent. */
  stop(): Promise<void>;
}

/** A random locally administered unicast MAC. */
export function randomMac(): string {
  const b = randomBytes(5);
  return ['52', ...Array.from(b, (x) => x.toString(16).padStart(2, '0'))].join(':');
}

/**
 * The whole lab, in the order its parts need each other: Keystone; Neutron and Ironic side by side (Ironic with
 * Keystone auth and the neutron interface, cleaning and provisioning on LAB.provisioningNetwork); that network;
 * ironic-neutron-agent reading Ironic. Each part retries a failed start once (Ironic up to twice: startIronic's own).
 */
export async function startNeutronLab(opts: StartNeutronOptions = {}): Promise<NeutronLab> {
  const avail = neutronAvailable();
  if (!avail.ok) throw new Error(`cannot start the Neutron lab: ${avail.reason}`);
  const stops: Array<() => Promise<unknown>> = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  };
  const t0 = performance.now();
  const since = (t: number) => Math.round(performance.now() - t);
  try {
    const keystone = await startKeystone();
    stops.push(() => keystone.stop());
    const keystoneMs = since(t0);

    const t1 = performance.now();
    let neutronMs = 0;
    let ironicMs = 0;
    const [neutronRes, ironicRes] = await Promise.allSettled([
      startNeutron(keystone, opts).then((n) => ((neutronMs = since(t1)), n)),
      startIronicWithKeystone(keystone, { neutron: { network: LAB.provisioningNetwork } }).then((i) => ((ironicMs = since(t1)), i)),
    ]);
    // Stopped side by side too (Neutron and its agent ≈ 4 s, Ironic ≈ 2 s), before Keystone.
    stops.push(() =>
      Promise.allSettled([neutronRes, ironicRes].map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined))),
    );
    if (neutronRes.status === 'rejected') throw neutronRes.reason;
    if (ironicRes.status === 'rejected') throw ironicRes.reason;
    const neutron = neutronRes.value;
    const ironic = ironicRes.value;

    const t2 = performance.now();
    const provisioningNetwork = await neutron.createNetwork(LAB.provisioningNetwork, {
      shared: true,
      provider: { network_type: 'flat', physical_network: LAB.flatPhysnet },
    });
    await neutron.createSubnet(provisioningNetwork.id, LAB.provisioningCidr, { name: `${LAB.provisioningNetwork}-subnet` });
    const provisioningNetworkMs = since(t2);

    await neutron.startAgent(ironic.url);
    const timings: LabTimings = { keystoneMs, neutronMs, ironicMs, provisioningNetworkMs, agentMs: neutron.timings.agentMs, totalMs: since(t0) };
    return makeLab(keystone, neutron, ironic, provisioningNetwork, timings, stopAll);
  } catch (err) {
    await stopAll();
    throw err;
  }
}

function makeLab(
  keystone: KeystoneHandle,
  neutron: NeutronHandle,
  ironic: IronicHandle,
  provisioningNetwork: NeutronNetwork,
  timings: LabTimings,
  stopAll: () => Promise<void>,
): NeutronLab {
  let switchPorts = 0;
  const vifOpts = (o: VifOptions) => ({ ...(o.token ? { token: o.token } : {}), ...(o.expect ? { expect: o.expect } : {}) });
  return {
    keystone,
    neutron,
    ironic,
    provisioningNetwork,
    timings,
    async enrollNodes(specs) {
      const ids = await ironic.enroll(
        specs.map((s) => ({
          name: s.name,
          properties: { memory_mb: 4096, cpus: 4, local_gb: 40, cpu_arch: 'x86_64' },
          ...(s.owner ? { owner: s.owner } : {}),
          ...(s.lessee ? { lessee: s.lessee } : {}),
          interfaces: { network_interface: 'neutron' },
        })),
      );
      for (const [i, spec] of specs.entries()) {
        for (const p of spec.ports ?? [{}]) {
          await ironic.request('POST', '/v1/ports', {
            node_uuid: ids[i],
            address: p.mac ?? randomMac(),
            physical_network: LAB.physnet,
            pxe_enabled: true,
            local_link_connection: { switch_id: LAB.switchId, port_id: p.switchPort ?? `Ethernet1/${++switchPorts}`, switch_info: LAB.switchInfo },
          });
        }
      }
      return ids;
    },
    async deployNode(id) {
      await ironic.setProvisionState(id, 'active');
      return ironic.waitForNode(id, (n) => n.provision_state === 'active' && !n.target_provision_state, { what: 'active' });
    },
    async undeployNode(id) {
      await ironic.setProvisionState(id, 'deleted');
      return ironic.waitForNode(id, (n) => n.provision_state === 'available' && !n.target_provision_state, { what: 'available' });
    },
    attachVif: (nodeId, portId, o = {}) => ironic.request('POST', `/v1/nodes/${nodeId}/vifs`, { id: portId }, vifOpts(o)),
    detachVif: (nodeId, portId, o = {}) => ironic.request('DELETE', `/v1/nodes/${nodeId}/vifs/${portId}`, undefined, vifOpts(o)),
    async listVifs(nodeId) {
      return (await ironic.request<{ vifs: Array<{ id: string }> }>('GET', `/v1/nodes/${nodeId}/vifs`)).body.vifs.map((v) => v.id);
    },
    waitForAgent: (nodeId, timeoutMs) => neutron.waitForAgent(nodeId, timeoutMs),
    stop: stopAll,
  };
}
