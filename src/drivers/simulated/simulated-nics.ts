import { createHash } from 'node:crypto';
import { InvalidRequestError } from '../../domain/errors.js';
import type { Nic } from '../../domain/networks.js';
import { SIMULATED_PHYSNET, type SimulatedNetworks } from './simulated-networks.js';

/** NICs per simulated node, each cabled to the simulated physnet (as the lab's Ironic ports on physnet1). */
const NICS_PER_NODE = 2;

interface NicRecord {
  readonly id: string;
  readonly node_id: string;
  readonly mac: string;
  readonly physical_network: string;
  vif: string | null;
}

/**
 * The simulated nodes' NICs and the VIFs plugged into them, with Ironic's rules and words: a VIF goes on the NIC
 * asked for or the first free one on the network's physnet, a port already plugged somewhere is refused, and the
 * port takes the NIC's MAC (Neutron refusing a MAC another port of the network holds). NIC ids and MACs derive from
 * the node's uuid, so they stay the same across restarts.
 */
export class SimulatedNics {
  private readonly byNode = new Map<string, NicRecord[]>();

  constructor(private readonly networks: SimulatedNetworks | null) {}

  add(nodeId: string): void {
    const nics = Array.from({ length: NICS_PER_NODE }, (_, i): NicRecord => {
      const hex = createHash('sha256').update(`leasehold-simulated-nic:${nodeId}:${i}`).digest('hex');
      const id = [hex.slice(0, 8), hex.slice(8, 12), `4${hex.slice(13, 16)}`, `8${hex.slice(17, 20)}`, hex.slice(20, 32)].join('-');
      // 52:54:00 is QEMU's prefix: what a lab of virtual machines shows.
      const mac = ['52', '54', '00', hex.slice(32, 34), hex.slice(34, 36), hex.slice(36, 38)].join(':');
      return { id, node_id: nodeId, mac, physical_network: SIMULATED_PHYSNET, vif: null };
    });
    this.byNode.set(nodeId, nics);
  }

  remove(nodeId: string): void {
    this.byNode.delete(nodeId);
  }

  list(nodeId: string): readonly Nic[] {
    return (this.byNode.get(nodeId) ?? []).map((n) => ({ ...n }));
  }

  withVifs(): readonly Nic[] {
    return [...this.byNode.values()].flat().filter((n) => n.vif !== null).map((n) => ({ ...n }));
  }

  /** The node and NIC a port is plugged into, or null. */
  plugOf(portId: string): { readonly node_id: string; readonly nic_id: string } | null {
    for (const nics of this.byNode.values()) {
      const nic = nics.find((n) => n.vif === portId);
      if (nic) return { node_id: nic.node_id, nic_id: nic.id };
    }
    return null;
  }

  attach(nodeId: string, vif: string, nicId: string | undefined): void {
    const plugged = this.plugOf(vif);
    if (plugged) throw new InvalidRequestError(`Unable to set VIF ${vif}, it is already attached to Ironic Port ${plugged.nic_id}.`);
    const nics = this.byNode.get(nodeId) ?? [];
    const port = this.networks ? this.networks.portRecord(vif) : null;
    if (this.networks && !port) throw new InvalidRequestError(`Unable to attach VIF ${vif}: Neutron port ${vif} was not found.`);
    let nic: NicRecord | undefined;
    if (nicId !== undefined) {
      nic = nics.find((n) => n.id === nicId);
      if (!nic) throw new InvalidRequestError(`Port ${nicId} could not be found on node ${nodeId}.`);
      if (nic.vif !== null) throw new InvalidRequestError(`Unable to attach VIF ${vif} to port ${nicId}: it already has VIF ${nic.vif}.`);
    } else {
      const physnet = port ? this.networks!.physnetOf(port.network_id) : null;
      nic = nics.find((n) => n.vif === null && (physnet === null || n.physical_network === physnet));
      if (!nic) throw new InvalidRequestError(`Unable to attach VIF ${vif}, not enough free physical ports.`);
    }
    this.networks?.setMac(vif, nic.mac);
    nic.vif = vif;
  }

  /** The VIF on each of the node's NICs (by NIC id; null: free): what the store keeps. */
  vifsOf(nodeId: string): Readonly<Record<string, string | null>> {
    return Object.fromEntries((this.byNode.get(nodeId) ?? []).map((n) => [n.id, n.vif]));
  }

  /** Plugs the stored VIFs back (a restart, or another instance's change); NICs not named are left as they are. */
  restoreVifs(nodeId: string, vifs: Readonly<Record<string, string | null>>): void {
    for (const nic of this.byNode.get(nodeId) ?? []) if (nic.id in vifs) nic.vif = vifs[nic.id] ?? null;
  }

  detach(nodeId: string, vif: string): void {
    const nic = (this.byNode.get(nodeId) ?? []).find((n) => n.vif === vif);
    if (nic) nic.vif = null;
  }
}
