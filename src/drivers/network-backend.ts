import type { Network, NetworkPort, Subport, Trunk } from '../domain/networks.js';

/**
 * The NetworkBackend port: what Leasehold needs of Neutron (https://docs.openstack.org/api-ref/network/v2/) to put
 * tenants' networks on leased nodes. Two implementations pass one contract suite (test/drivers/network-contract.ts):
 * `neutron` (REST with Leasehold's Keystone service token, which sees every project's networks and ports and may
 * create a port in a tenant's name) and `simulated` (the demo's in-process networks, beside the simulated driver).
 *
 * Leasehold decides who may use what (domain/networks.ts `networkVisibleTo`, a port's `project_id`); the backend only
 * reports what exists. The VIF itself — plugging a port into a NIC — is Ironic's (HardwareDriver.attachVif).
 *
 * Errors: only errors from domain/errors.ts — BackendUnavailableError when the backend cannot be reached or answers
 * 5xx; InvalidRequestError / ConflictError with the backend's own reason when it refuses a request (e.g. Neutron's
 * "MAC address … in use"). Lookups of something missing answer null, deletions of something missing succeed.
 */
export interface NetworkBackend {
  readonly kind: 'neutron' | 'simulated';
  /** Throws BackendUnavailableError when the backend cannot be reached. */
  ping(): Promise<void>;
  /** Whether trunks (one native and several tagged networks on one NIC) can be made here. */
  supportsTrunks(): Promise<boolean>;

  /** The networks `projectId` may use (its own, shared, shared with it); every network when null (the operator). */
  listNetworks(projectId: string | null): Promise<readonly Network[]>;
  /** One network by id, or null. */
  getNetwork(id: string): Promise<Network | null>;
  /** Networks named `name` (names are not unique in Neutron). */
  networksNamed(name: string): Promise<readonly Network[]>;

  /** A new port on `network_id` owned by `project_id` (Leasehold's name and description mark it as Leasehold's). */
  createPort(spec: NewPort): Promise<NetworkPort>;
  /** One port by id, or null. */
  getPort(id: string): Promise<NetworkPort | null>;
  /** The ports among `ids` that exist (one request per ~100 ids). */
  getPorts(ids: readonly string[]): Promise<ReadonlyMap<string, NetworkPort>>;
  /** The port on `networkId` that holds `mac`, or null (a MAC is unique within a network). */
  portWithMac(networkId: string, mac: string): Promise<NetworkPort | null>;
  /** Idempotent: a port already gone is fine. */
  deletePort(id: string): Promise<void>;

  createTrunk(spec: NewTrunk): Promise<Trunk>;
  getTrunk(id: string): Promise<Trunk | null>;
  addSubports(trunkId: string, subports: readonly Subport[]): Promise<Trunk>;
  /** Idempotent for subports no longer on the trunk. */
  removeSubports(trunkId: string, portIds: readonly string[]): Promise<Trunk>;
  /** Idempotent: a trunk already gone is fine. Its ports stay (delete them after). */
  deleteTrunk(id: string): Promise<void>;

  close(): Promise<void>;
}

export interface NewPort {
  readonly network_id: string;
  readonly project_id: string;
  readonly name: string;
  readonly description?: string;
}

export interface NewTrunk {
  readonly project_id: string;
  readonly name: string;
  readonly parent_port_id: string;
  readonly subports: readonly Subport[];
}
