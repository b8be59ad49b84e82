import type { NewAuditEvent } from '../domain/leasing.js';
import type { AttachmentState, NetworkAttachment, TaggedNetwork } from '../domain/networks.js';

export interface NewAttachment {
  readonly node_id: string;
  readonly project_id: string;
  readonly lease_id: string | null;
  readonly network_id: string;
  readonly network_name: string;
  readonly segmentation_id: number | null;
  /** Known at once for a port the caller brought (or one let through the gateway). */
  readonly port_id?: string | null;
  readonly nic_id?: string | null;
  readonly mac?: string | null;
  readonly tagged?: readonly TaggedNetwork[];
  readonly state: AttachmentState;
  readonly created_by: string | null;
}

/** What a step of an attach or a detach changes on the row. */
export type AttachmentPatch = Partial<
  Pick<NetworkAttachment, 'state' | 'port_id' | 'port_created' | 'nic_id' | 'mac' | 'trunk_id' | 'trunk_created' | 'tagged' | 'last_error'>
>;

/**
 * Network attachments (migration 0008): each written before Neutron or Ironic is asked anything and advanced after
 * every step, with its audit events in the same transaction. Errors: NotFoundError('network attachment', id) for
 * an update of a row that does not exist; AlreadyExistsError when a live row already holds the port.
 */
export interface NetworkStore {
  create(input: NewAttachment, events: readonly NewAuditEvent[], now: Date): Promise<NetworkAttachment>;
  /** Sets `ended_at` when the state becomes `detached` or `failed`. */
  update(id: string, patch: AttachmentPatch, events: readonly NewAuditEvent[], now: Date): Promise<NetworkAttachment>;
  get(id: string): Promise<NetworkAttachment | null>;
  /** The node's attachments that may have something plugged or created (attaching, attached, detaching), oldest first. */
  live(nodeId: string): Promise<readonly NetworkAttachment[]>;
  /** Live attachments of every node (the reconciler), oldest first. */
  allLive(): Promise<readonly NetworkAttachment[]>;
  /** The live attachment holding a port, or null. */
  byPort(portId: string): Promise<NetworkAttachment | null>;
  /** Audit events alone (a repair that changed no row: a VIF Leasehold never recorded). */
  record(events: readonly NewAuditEvent[], now: Date): Promise<void>;
}
