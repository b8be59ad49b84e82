import { bindingOf, type Binding, type Network, type NetworkAttachment, type NetworkPort, type Nic, type TaggedNetwork } from '../domain/networks.js';

/** Who looks at a node's NICs: the operator and the node's owner see every attachment, a lessee its project's. */
export interface Viewer {
  readonly project_id: string | null;
  readonly admin: boolean;
  readonly owner: boolean;
}

/** What is plugged into a NIC, as the viewer may see it. */
export interface AttachmentView {
  /** Leasehold's attachment id, or the port id of a VIF it holds no record of (plugged behind its back). */
  readonly id: string;
  readonly port_id: string;
  /** Whose port it is. */
  readonly project_id: string | null;
  readonly network: Pick<Network, 'id' | 'name' | 'network_type' | 'physical_network' | 'segmentation_id'> | null;
  readonly binding: Binding | null;
  /** Neutron's port status (ACTIVE, DOWN, ...), or null when the port no longer exists. */
  readonly port_status: string | null;
  readonly vif_type: string | null;
  /** Leasehold created the port: it deletes it when the attachment ends. */
  readonly port_created: boolean;
  readonly lease_id: string | null;
  readonly trunk: { readonly id: string; readonly tagged: readonly TaggedNetwork[] } | null;
  readonly created_by: string | null;
  readonly created_at: Date | null;
}

export interface NicView {
  readonly nic: Nic;
  /** What is plugged in, or null when nothing is or the viewer may not see whose it is (then `nic.vif` is hidden). */
  readonly attachment: AttachmentView | null;
}

/** The attachment on a NIC as `viewer` may see it; null when it is another project's (the NIC just shows in use). */
export function attachmentFor(
  viewer: Viewer,
  vif: string,
  row: NetworkAttachment | null,
  port: NetworkPort | null,
  network: Network | null,
): AttachmentView | null {
  const project = port?.project_id ?? row?.project_id ?? null;
  if (!(viewer.admin || viewer.owner || (project !== null && project === viewer.project_id))) return null;
  return {
    id: row?.id ?? vif,
    port_id: vif,
    project_id: project,
    network: network
      ? { id: network.id, name: network.name, network_type: network.network_type, physical_network: network.physical_network, segmentation_id: network.segmentation_id }
      : row
        ? { id: row.network_id, name: row.network_name, network_type: null, physical_network: null, segmentation_id: row.segmentation_id }
        : null,
    binding: port ? bindingOf(port) : null,
    port_status: port?.status ?? null,
    vif_type: port?.vif_type ?? null,
    port_created: row?.port_created ?? false,
    lease_id: row?.lease_id ?? null,
    trunk: row?.trunk_id ? { id: row.trunk_id, tagged: row.tagged } : port?.trunk_id ? { id: port.trunk_id, tagged: [] } : null,
    created_by: row?.created_by ?? null,
    created_at: row?.created_at ?? null,
  };
}
