/**
 * Tenant networks on leased nodes (pure data and decisions, no I/O): a node's NICs (Ironic ports), the networks a
 * project may use (Neutron's, or the simulated ones of the demo), the Neutron ports Leasehold plugs into NICs as
 * Ironic VIFs, and which of the VIFs on a node may stay there.
 */

/** A NIC of a node: an Ironic port, with the VIF (a Neutron port id) Ironic has attached to it, if any. */
export interface Nic {
  /** Ironic's port uuid. */
  readonly id: string;
  readonly node_id: string;
  /** The NIC's MAC address, lower case. */
  readonly mac: string;
  /** Ironic's `physical_network`: which physnet the NIC is cabled to (null: any). */
  readonly physical_network: string | null;
  /** The Neutron port attached to this NIC (Ironic's `internal_info.tenant_vif_port_id`), or null. */
  readonly vif: string | null;
}

/** A network a port can be created on, as the operator sees it (provider attributes included). */
export interface Network {
  readonly id: string;
  readonly name: string;
  /** The project that owns it (Neutron's `project_id`). */
  readonly project_id: string;
  /** Shared with every project (Neutron's `shared`). */
  readonly shared: boolean;
  /** Projects it is shared with one by one (Neutron's RBAC `access_as_shared` policies; `*` is everyone). */
  readonly shared_with: readonly string[];
  /** `vlan`, `flat`, `vxlan`, ... or null when not known. */
  readonly network_type: string | null;
  readonly physical_network: string | null;
  /** The VLAN id (or VNI) of its segment; null for a flat network. */
  readonly segmentation_id: number | null;
  readonly status: string;
}

/** A Neutron port: what gets plugged into a NIC as a VIF. */
export interface NetworkPort {
  readonly id: string;
  readonly name: string;
  readonly network_id: string;
  readonly project_id: string;
  readonly mac: string | null;
  /** Neutron's status: `ACTIVE`, `DOWN`, `BUILD`, `ERROR`. */
  readonly status: string;
  /** Neutron's `binding:vif_type`: `unbound`, `binding_failed`, `other` (bound by the baremetal driver), ... */
  readonly vif_type: string | null;
  /** Neutron's `binding:host_id`: the node's uuid once Ironic has bound it. */
  readonly host_id: string | null;
  /** The trunk whose parent this port is, or null. */
  readonly trunk_id: string | null;
}

/** A trunk: one parent port (the native network) and subports on tagged VLANs. */
export interface Trunk {
  readonly id: string;
  readonly project_id: string;
  readonly parent_port_id: string;
  readonly subports: readonly Subport[];
}

export interface Subport {
  readonly port_id: string;
  readonly segmentation_type: 'vlan';
  readonly segmentation_id: number;
}

export const Binding = {
  /** Bound to the node's switch port: traffic flows. */
  Bound: 'bound',
  /** Attached, not bound (yet): a node that is not deployed, or an agent that has not reported the node. */
  Unbound: 'unbound',
  /** Neutron could not bind it (no mechanism driver took it). */
  Failed: 'failed',
} as const;
export type Binding = (typeof Binding)[keyof typeof Binding];

/** How a port's binding reads to a person. */
export function bindingOf(port: Pick<NetworkPort, 'vif_type' | 'status'>): Binding {
  if (port.vif_type === 'binding_failed') return Binding.Failed;
  if (port.vif_type === null || port.vif_type === 'unbound' || port.vif_type === '') return Binding.Unbound;
  return Binding.Bound;
}

/** Whether `projectId` may put ports on `network` (Neutron's rule: its own, shared, or RBAC-shared to it). */
export function networkVisibleTo(network: Pick<Network, 'project_id' | 'shared' | 'shared_with'>, projectId: string): boolean {
  return network.project_id === projectId || network.shared || network.shared_with.includes(projectId) || network.shared_with.includes('*');
}

/** The NIC a new attachment goes on: the one asked for by MAC, else the first free one cabled to the network's physnet. */
export function pickNic(
  nics: readonly Nic[],
  network: Pick<Network, 'physical_network'>,
  mac: string | null,
): { readonly nic: Nic } | { readonly refusal: 'no_such_mac' | 'nic_in_use' | 'no_free_nic' } {
  if (mac !== null) {
    const nic = nics.find((n) => n.mac === mac.toLowerCase());
    if (!nic) return { refusal: 'no_such_mac' };
    return nic.vif === null ? { nic } : { refusal: 'nic_in_use' };
  }
  const free = nics.filter((n) => n.vif === null);
  const fits = free.find((n) => network.physical_network === null || n.physical_network === null || n.physical_network === network.physical_network);
  return fits ? { nic: fits } : { refusal: 'no_free_nic' };
}

/** Why a VIF has to go. */
export const VifRemoval = {
  /** Its port belongs to neither the node's owner nor the project leasing it now. */
  NotHolders: 'not_holders',
  /** Its Neutron port no longer exists. */
  PortGone: 'port_gone',
} as const;
export type VifRemoval = (typeof VifRemoval)[keyof typeof VifRemoval];

export interface VifVerdict {
  readonly node_id: string;
  readonly vif: string;
  readonly port_project_id: string | null;
  readonly reason: VifRemoval;
}

/**
 * Which VIFs must leave their nodes: a VIF may stay on a node only while its Neutron port belongs to the node's
 * owner or to a project that may use the node right now (`holders`: the current lessee, or a lessee whose hand-over
 * or release is under way — never decided from a stale read). Everything else — a former lessee's port, another
 * tenant's port plugged behind Leasehold's back, a port deleted in Neutron — is removed.
 */
export function vifsToRemove(
  nics: readonly Nic[],
  ports: ReadonlyMap<string, Pick<NetworkPort, 'project_id'>>,
  holders: (nodeId: string) => readonly string[],
): readonly VifVerdict[] {
  const out: VifVerdict[] = [];
  const seen = new Set<string>();
  for (const nic of nics) {
    if (nic.vif === null || seen.has(`${nic.node_id}/${nic.vif}`)) continue;
    seen.add(`${nic.node_id}/${nic.vif}`);
    const port = ports.get(nic.vif);
    if (!port) {
      out.push({ node_id: nic.node_id, vif: nic.vif, port_project_id: null, reason: VifRemoval.PortGone });
      continue;
    }
    if (!holders(nic.node_id).includes(port.project_id)) {
      out.push({ node_id: nic.node_id, vif: nic.vif, port_project_id: port.project_id, reason: VifRemoval.NotHolders });
    }
  }
  return out;
}

/** A MAC address as Neutron and Ironic write it (six lower-case hex pairs with colons), or null when it is not one. */
export function normalizeMac(value: string): string | null {
  const hex = value.trim().toLowerCase().replace(/[-:.]/g, '');
  if (!/^[0-9a-f]{12}$/.test(hex)) return null;
  return hex.match(/../g)!.join(':');
}

export const AttachmentState = {
  /** Written before anything is asked of Neutron or Ironic: a crash here leaves a row that says what to undo. */
  Attaching: 'attaching',
  Attached: 'attached',
  Detaching: 'detaching',
  Detached: 'detached',
  /** The attach did not complete; whatever it created was removed. */
  Failed: 'failed',
} as const;
export type AttachmentState = (typeof AttachmentState)[keyof typeof AttachmentState];
/** An attachment in one of these may have something plugged into the node or created in Neutron. */
export const LIVE_ATTACHMENT_STATES: readonly AttachmentState[] = [AttachmentState.Attaching, AttachmentState.Attached, AttachmentState.Detaching];

/** A tagged network on an attachment's trunk. */
export interface TaggedNetwork {
  readonly network_id: string;
  readonly network_name: string;
  readonly segmentation_id: number | null;
  readonly port_id: string | null;
  readonly port_created: boolean;
}

/** A network attachment as Leasehold records it (store/network-store.ts). */
export interface NetworkAttachment {
  readonly id: string;
  readonly node_id: string;
  /** The project whose port it is. */
  readonly project_id: string;
  /** The lease the caller held the node under when it attached; null for the owner's or the operator's own. */
  readonly lease_id: string | null;
  readonly network_id: string;
  readonly network_name: string;
  readonly segmentation_id: number | null;
  readonly port_id: string | null;
  /** Leasehold created the port, so it deletes it when the attachment ends. */
  readonly port_created: boolean;
  readonly nic_id: string | null;
  readonly mac: string | null;
  readonly trunk_id: string | null;
  readonly trunk_created: boolean;
  readonly tagged: readonly TaggedNetwork[];
  readonly state: AttachmentState;
  readonly created_by: string | null;
  readonly created_at: Date;
  readonly updated_at: Date;
  readonly ended_at: Date | null;
  readonly last_error: string | null;
}
