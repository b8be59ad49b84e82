import { z } from '@hono/zod-openapi';
import type { Network, NetworkAttachment, TaggedNetwork } from '../domain/networks.js';
import type { AttachmentView, NicView } from '../networking/nic-view.js';
import { IdOrName, safeName } from './schemas.js';

/** Tenant networks in the public contract (served in /openapi.json). */

const Timestamp = z.string().openapi({ format: 'date-time' });

export const NetworkSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    project_id: z.string().openapi({ description: "The project that owns it (Neutron's project_id)." }),
    shared: z.boolean().openapi({ description: 'Shared with every project.' }),
    network_type: z.string().nullable().openapi({ example: 'vlan' }),
    physical_network: z.string().nullable().openapi({ example: 'physnet1' }),
    vlan: z.number().int().nullable().openapi({ description: 'The VLAN id (segmentation id) of its segment; null for a flat network.', example: 142 }),
    status: z.string(),
  })
  .openapi('Network');

const NetworkRef = z.object({
  id: z.string(),
  name: z.string(),
  network_type: z.string().nullable(),
  physical_network: z.string().nullable(),
  vlan: z.number().int().nullable(),
});

const TaggedSchema = z.object({
  network: z.object({ id: z.string(), name: z.string(), vlan: z.number().int().nullable() }),
  port_id: z.string().nullable(),
  port_created: z.boolean(),
});

export const AttachmentSchema = z
  .object({
    id: z.string().openapi({ description: "Leasehold's attachment id (or the port id of a VIF plugged in without Leasehold)." }),
    node_id: z.string(),
    nic: z.object({ id: z.string().nullable(), mac: z.string().nullable() }),
    port_id: z.string().nullable().openapi({ description: 'The Neutron port plugged in as the VIF.' }),
    project_id: z.string().nullable().openapi({ description: 'Whose port it is.' }),
    network: NetworkRef.nullable(),
    state: z.enum(['attaching', 'attached', 'detaching', 'detached', 'failed']),
    binding: z.enum(['bound', 'unbound', 'failed']).nullable().openapi({ description: "bound: Neutron bound the port to the NIC's switch port (the node is deployed); unbound: not yet." }),
    port_status: z.string().nullable().openapi({ description: "Neutron's port status (ACTIVE, DOWN, ...)." }),
    port_created: z.boolean().openapi({ description: 'Leasehold created the port and deletes it when the attachment ends.' }),
    lease_id: z.string().nullable(),
    trunk: z.object({ id: z.string(), tagged: z.array(TaggedSchema) }).nullable(),
    created_by: z.string().nullable(),
    created_at: Timestamp.nullable(),
    ended_at: Timestamp.nullable(),
    last_error: z.string().nullable(),
  })
  .openapi('NetworkAttachment');

export const NicSchema = z
  .object({
    id: z.string().openapi({ description: "Ironic's port uuid." }),
    mac: z.string(),
    physical_network: z.string().nullable(),
    in_use: z.boolean(),
    attachment: z.union([AttachmentSchema, z.null()]),
  })
  .openapi('Nic', { description: "A NIC (Ironic port) and what is plugged in: `attachment` is null when nothing is, or when it is another project's (`in_use` tells)." });

export const NodeNetworksSchema = z.object({ node_id: z.string(), nics: z.array(NicSchema) }).openapi('NodeNetworks');

export const AttachBody = z
  .object({
    network: IdOrName.optional().openapi({ description: 'A network id or name the caller may use; optional with `port`.' }),
    mac: safeName(32).optional().openapi({ description: "The NIC to use, by its MAC; default: a free NIC on the network's physical network." }),
    port: safeName(64).optional().openapi({ description: "An existing Neutron port of the caller's project to plug in (instead of a new one)." }),
    tagged: z.array(IdOrName).max(32).optional().openapi({ description: 'Tagged networks: a trunk with `network` native and these on their VLANs.' }),
  })
  .strict()
  .refine((b) => b.network !== undefined || b.port !== undefined, { message: 'give `network` (an id or name), or `port`', path: ['network'] });

export const TaggedBody = z.object({ networks: z.array(IdOrName).min(1).max(32) }).strict();

export function toNetworkJson(n: Network) {
  return { id: n.id, name: n.name, project_id: n.project_id, shared: n.shared, network_type: n.network_type, physical_network: n.physical_network, vlan: n.segmentation_id, status: n.status };
}

function taggedJson(t: TaggedNetwork) {
  return { network: { id: t.network_id, name: t.network_name, vlan: t.segmentation_id }, port_id: t.port_id, port_created: t.port_created };
}

/** A recorded attachment (POST and DELETE answers), with the node's NIC as it was chosen. */
export function toAttachmentJson(a: NetworkAttachment, extra: { binding?: AttachmentView['binding']; port_status?: string | null } = {}) {
  return {
    id: a.id,
    node_id: a.node_id,
    nic: { id: a.nic_id, mac: a.mac },
    port_id: a.port_id,
    project_id: a.project_id,
    network: { id: a.network_id, name: a.network_name, network_type: null, physical_network: null, vlan: a.segmentation_id },
    state: a.state,
    binding: extra.binding ?? null,
    port_status: extra.port_status ?? null,
    port_created: a.port_created,
    lease_id: a.lease_id,
    trunk: a.trunk_id ? { id: a.trunk_id, tagged: a.tagged.map(taggedJson) } : null,
    created_by: a.created_by,
    created_at: a.created_at.toISOString(),
    ended_at: a.ended_at?.toISOString() ?? null,
    last_error: a.last_error,
  };
}

/** A node's NICs as the viewer may see them. */
export function toNodeNetworksJson(nodeId: string, nics: readonly NicView[]) {
  return {
    node_id: nodeId,
    nics: nics.map(({ nic, attachment: a }) => ({
      id: nic.id,
      mac: nic.mac,
      physical_network: nic.physical_network,
      in_use: nic.vif !== null,
      attachment: a
        ? {
            id: a.id,
            node_id: nodeId,
            nic: { id: nic.id, mac: nic.mac },
            port_id: a.port_id,
            project_id: a.project_id,
            network: a.network ? { id: a.network.id, name: a.network.name, network_type: a.network.network_type, physical_network: a.network.physical_network, vlan: a.network.segmentation_id } : null,
            state: 'attached' as const,
            binding: a.binding,
            port_status: a.port_status,
            port_created: a.port_created,
            lease_id: a.lease_id,
            trunk: a.trunk ? { id: a.trunk.id, tagged: a.trunk.tagged.map(taggedJson) } : null,
            created_by: a.created_by,
            created_at: a.created_at?.toISOString() ?? null,
            ended_at: null,
            last_error: null,
          }
        : null,
    })),
  };
}
