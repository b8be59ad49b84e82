import { BackendUnavailableError } from '../../domain/errors.js';
import type { Nic } from '../../domain/networks.js';

/**
 * The port fields Leasehold reads (`GET /v1/ports?fields=`): `physical_network` needs 1.34 and `internal_info` 1.18,
 * both below the driver's floor (1.65). The VIF is `internal_info.tenant_vif_port_id` (Ironic's own cleaning and
 * provisioning ports live under other keys and are not tenants' VIFs).
 */
export const NIC_FIELDS = ['uuid', 'address', 'node_uuid', 'physical_network', 'internal_info'].join(',');

/** A DriverNode's NIC from one of Ironic's ports. */
export function toNic(raw: unknown): Nic {
  const port = raw as Record<string, unknown> | null;
  if (!port || typeof port.uuid !== 'string' || typeof port.node_uuid !== 'string' || typeof port.address !== 'string') {
    throw new BackendUnavailableError('Ironic answered a port without uuid, node_uuid or address');
  }
  const info = (port.internal_info ?? {}) as Record<string, unknown>;
  const vif = info.tenant_vif_port_id;
  return {
    id: port.uuid,
    node_id: port.node_uuid,
    mac: port.address.toLowerCase(),
    physical_network: typeof port.physical_network === 'string' && port.physical_network !== '' ? port.physical_network : null,
    vif: typeof vif === 'string' && vif !== '' ? vif : null,
  };
}
