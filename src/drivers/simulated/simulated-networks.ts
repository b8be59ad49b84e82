import { randomBytes, randomUUID } from 'node:crypto';
import { BackendUnavailableError, ConflictError, InvalidRequestError } from '../../domain/errors.js';
import type { Network, NetworkPort, Subport, Trunk } from '../../domain/networks.js';
import type { NetworkBackend, NewPort, NewTrunk } from '../network-backend.js';

/** A network as the demo (or a test) creates it. */
export interface SimulatedNetworkSpec {
  readonly name: string;
  readonly project_id: string;
  readonly shared?: boolean;
  readonly shared_with?: readonly string[];
  /** `vlan` (default: a VLAN id is allocated) or `flat`. */
  readonly network_type?: 'vlan' | 'flat';
  readonly physical_network?: string;
}

/** Where a simulated port is plugged, as the simulated driver knows it: binding follows the node's deployment. */
export type PlugLookup = (portId: string) => { readonly node_id: string; readonly deployed: boolean } | null;

/** Tenant VLANs come from this range (Neutron's `network_vlan_ranges = physnet1:100:199` in the lab). */
const VLAN_FIRST = 100;
const VLAN_LAST = 199;
export const SIMULATED_PHYSNET = 'physnet1';

interface PortRecord {
  id: string;
  name: string;
  network_id: string;
  project_id: string;
  mac: string;
  trunk_id: string | null;
}

/**
 * The demo's networks behind the NetworkBackend port: Neutron's model in memory — networks (own, shared, shared
 * with a project), ports with MACs unique per network, trunks with VLAN subports — with Neutron's refusals in its
 * words. With `demo` on, a project seen for the first time gets two VLAN networks of its own (`private`, `data`)
 * beside the shared flat `public`, so `npm start` shows the feature without OpenStack. A port is bound while the
 * simulated driver has it plugged into a deployed node (`plugs`), as ironic-neutron-agent binds it in the lab.
 */
export class SimulatedNetworks implements NetworkBackend {
  readonly kind = 'simulated' as const;
  private readonly networks = new Map<string, Network>();
  private readonly ports = new Map<string, PortRecord>();
  private readonly trunks = new Map<string, Trunk>();
  private readonly provisioned = new Set<string>();
  private nextVlan = VLAN_FIRST;
  private plugs: PlugLookup = () => null;
  private down = false;

  constructor(private readonly options: { readonly demo?: boolean; readonly trunks?: boolean } = {}) {
    if (options.demo) this.createNetwork({ name: 'public', project_id: 'admin', shared: true, network_type: 'flat' });
  }

  /** The simulated driver tells where ports are plugged. */
  setPlugLookup(lookup: PlugLookup): void {
    this.plugs = lookup;
  }

  /** Fault injection: the backend stops answering (BackendUnavailableError) until set back. */
  setUnavailable(down: boolean): void {
    this.down = down;
  }

  createNetwork(spec: SimulatedNetworkSpec): Network {
    const type = spec.network_type ?? 'vlan';
    if (type === 'vlan' && this.nextVlan > VLAN_LAST) throw new ConflictError('Unable to create the network. No tenant network is available for allocation.');
    const network: Network = {
      id: randomUUID(),
      name: spec.name,
      project_id: spec.project_id,
      shared: spec.shared ?? false,
      shared_with: [...(spec.shared_with ?? [])],
      network_type: type,
      physical_network: spec.physical_network ?? SIMULATED_PHYSNET,
      segmentation_id: type === 'vlan' ? this.nextVlan++ : null,
      status: 'ACTIVE',
    };
    this.networks.set(network.id, network);
    return network;
  }

  async ping(): Promise<void> {
    this.enter();
  }

  async supportsTrunks(): Promise<boolean> {
    this.enter();
    return this.options.trunks ?? true;
  }

  async listNetworks(projectId: string | null): Promise<readonly Network[]> {
    this.enter();
    if (projectId !== null) this.provision(projectId);
    const all = [...this.networks.values()];
    return projectId === null
      ? all
      : all.filter((n) => n.project_id === projectId || n.shared || n.shared_with.includes(projectId) || n.shared_with.includes('*'));
  }

  async getNetwork(id: string): Promise<Network | null> {
    this.enter();
    return this.networks.get(id) ?? null;
  }

  async networksNamed(name: string): Promise<readonly Network[]> {
    this.enter();
    return [...this.networks.values()].filter((n) => n.name === name);
  }

  async createPort(spec: NewPort): Promise<NetworkPort> {
    this.enter();
    if (!this.networks.has(spec.network_id)) throw new InvalidRequestError(`Neutron: Network ${spec.network_id} could not be found.`);
    const record: PortRecord = { id: randomUUID(), name: spec.name, network_id: spec.network_id, project_id: spec.project_id, mac: randomMac(), trunk_id: null };
    this.ports.set(record.id, record);
    return this.view(record);
  }

  async getPort(id: string): Promise<NetworkPort | null> {
    this.enter();
    const record = this.ports.get(id);
    return record ? this.view(record) : null;
  }

  async getPorts(ids: readonly string[]): Promise<ReadonlyMap<string, NetworkPort>> {
    this.enter();
    return new Map(ids.flatMap((id) => (this.ports.has(id) ? [[id, this.view(this.ports.get(id)!)] as const] : [])));
  }

  async portWithMac(networkId: string, mac: string): Promise<NetworkPort | null> {
    this.enter();
    const record = [...this.ports.values()].find((p) => p.network_id === networkId && p.mac === mac.toLowerCase());
    return record ? this.view(record) : null;
  }

  async deletePort(id: string): Promise<void> {
    this.enter();
    const record = this.ports.get(id);
    if (!record) return;
    if (record.trunk_id !== null) throw new ConflictError(`Neutron: Port ${id} is currently a parent port for trunk ${record.trunk_id}.`);
    if ([...this.trunks.values()].some((t) => t.subports.some((s) => s.port_id === id))) {
      throw new ConflictError(`Neutron: Port ${id} is in use as a subport of a trunk.`);
    }
    this.ports.delete(id);
  }

  /** Every port (an operator's `openstack port list`): what tests and the demo look at. */
  allPorts(): readonly NetworkPort[] {
    return [...this.ports.values()].map((p) => this.view(p));
  }

  /** A port as the simulated Ironic looks it up (no fault injection: Ironic's own view of Neutron). */
  portRecord(id: string): { readonly network_id: string } | null {
    return this.ports.get(id) ?? null;
  }

  /** The physnet of a network (Ironic matches it with its NICs'), or null. */
  physnetOf(networkId: string): string | null {
    return this.networks.get(networkId)?.physical_network ?? null;
  }

  /**
   * Ironic sets a port's MAC to the NIC's when it attaches it. Neutron refuses a MAC another port of the same network
   * holds (409 MacAddressInUse): the simulated driver asks this first, as Ironic does.
   */
  setMac(portId: string, mac: string): void {
    const record = this.ports.get(portId);
    if (!record) throw new InvalidRequestError(`Neutron port ${portId} could not be found.`);
    const holder = [...this.ports.values()].find((p) => p.id !== portId && p.network_id === record.network_id && p.mac === mac);
    if (holder) throw new ConflictError(`Neutron: Unable to complete operation for network ${record.network_id}. The mac address ${mac} is in use.`);
    record.mac = mac;
  }

  async createTrunk(spec: NewTrunk): Promise<Trunk> {
    this.enter();
    if (!(this.options.trunks ?? true)) throw new InvalidRequestError('Neutron has no /trunks (404): is the extension enabled?');
    const parent = this.ports.get(spec.parent_port_id);
    if (!parent) throw new InvalidRequestError(`Neutron: Port ${spec.parent_port_id} could not be found.`);
    if (parent.trunk_id !== null) throw new ConflictError(`Neutron: Port ${parent.id} is currently in use and is not eligible for use as a parent port.`);
    const trunk: Trunk = { id: randomUUID(), project_id: spec.project_id, parent_port_id: parent.id, subports: [] };
    this.trunks.set(trunk.id, trunk);
    parent.trunk_id = trunk.id;
    return spec.subports.length > 0 ? this.addSubports(trunk.id, spec.subports) : trunk;
  }

  async getTrunk(id: string): Promise<Trunk | null> {
    this.enter();
    return this.trunks.get(id) ?? null;
  }

  async addSubports(trunkId: string, subports: readonly Subport[]): Promise<Trunk> {
    this.enter();
    const trunk = this.trunks.get(trunkId);
    if (!trunk) throw new BackendUnavailableError(`Neutron has no trunk ${trunkId}`);
    for (const s of subports) {
      if (!this.ports.has(s.port_id)) throw new InvalidRequestError(`Neutron: Port ${s.port_id} could not be found.`);
      if (trunk.subports.some((t) => t.segmentation_id === s.segmentation_id)) {
        throw new ConflictError(`Neutron: segmentation type vlan and id ${s.segmentation_id} already in use on trunk ${trunkId}.`);
      }
    }
    const next: Trunk = { ...trunk, subports: [...trunk.subports, ...subports] };
    this.trunks.set(trunkId, next);
    return next;
  }

  async removeSubports(trunkId: string, portIds: readonly string[]): Promise<Trunk> {
    this.enter();
    const trunk = this.trunks.get(trunkId);
    if (!trunk) throw new BackendUnavailableError(`Neutron has no trunk ${trunkId}`);
    const next: Trunk = { ...trunk, subports: trunk.subports.filter((s) => !portIds.includes(s.port_id)) };
    this.trunks.set(trunkId, next);
    return next;
  }

  async deleteTrunk(id: string): Promise<void> {
    this.enter();
    const trunk = this.trunks.get(id);
    if (!trunk) return;
    if (this.plugs(trunk.parent_port_id)?.deployed) throw new ConflictError(`Neutron: Trunk ${id} is currently in use.`);
    const parent = this.ports.get(trunk.parent_port_id);
    if (parent) parent.trunk_id = null;
    this.trunks.delete(id);
  }

  async close(): Promise<void> {}

  /** The demo's networks of a project seen for the first time. */
  private provision(projectId: string): void {
    if (!this.options.demo || this.provisioned.has(projectId)) return;
    this.provisioned.add(projectId);
    if ([...this.networks.values()].some((n) => n.project_id === projectId)) return;
    for (const name of ['private', 'data']) this.createNetwork({ name, project_id: projectId });
  }

  private view(record: PortRecord): NetworkPort {
    const plug = this.plugs(record.id);
    const bound = plug?.deployed === true;
    return {
      id: record.id,
      name: record.name,
      network_id: record.network_id,
      project_id: record.project_id,
      mac: record.mac,
      status: bound ? 'ACTIVE' : 'DOWN',
      vif_type: bound ? 'other' : 'unbound',
      host_id: bound ? plug.node_id : null,
      trunk_id: record.trunk_id,
    };
  }

  private enter(): void {
    if (this.down) throw new BackendUnavailableError('the simulated network service is unavailable (fault injected)');
  }
}

/** A locally administered unicast MAC in Neutron's default base (fa:16:3e). */
function randomMac(): string {
  return ['fa', '16', '3e', ...[...randomBytes(3)].map((b) => b.toString(16).padStart(2, '0'))].join(':');
}
