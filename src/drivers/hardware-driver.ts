import type { Duplex } from 'node:stream';
import type { Nic } from '../domain/networks.js';

/**
 * The HardwareDriver port: what Leasehold needs of Ironic, shaped after Ironic's REST API
 * (https://docs.openstack.org/api-ref/baremetal/). Two implementations pass one contract suite:
 * `ironic` (REST client) and `simulated` (in-process hardware for the demo and fast tests).
 *
 * Secrets never cross this port: a DriverNode has no `driver_info`, so BMC credentials cannot leak into the
 * store, the API or the logs by accident.
 *
 * Errors: implementations throw only errors from `domain/errors.ts`:
 * - NotFoundError('node', id) for an unknown node,
 * - NodeBusyError while the node is locked by another operation (Ironic's 409 "node is locked"),
 * - InvalidStateError when the node's state does not allow the request (Ironic's 400/409 on a transition),
 * - BackendUnavailableError when the backend cannot be reached (Ironic down, 503),
 * - whatever a call's AccessGuard refuses with (below).
 *
 * Calls made on a caller's behalf (REST power and boot device, the gateway, the console turn-on) carry an
 * AccessGuard: the driver asks it before every attempt, so nothing a lessee sends reaches the hardware after its
 * lease ended, whatever the retries (issue 11: a power-on sent in a lease's last 1.5 s used to run in Ironic
 * 1.0–2.2 s after the end, retried on Ironic's 409 "node is locked").
 */

/** Ironic provision states (the subset Leasehold meets). */
export const ProvisionState = {
  Enroll: 'enroll',
  Verifying: 'verifying',
  Manageable: 'manageable',
  Cleaning: 'cleaning',
  CleanWait: 'clean wait',
  CleanFailed: 'clean failed',
  Available: 'available',
  Deploying: 'deploying',
  DeployWait: 'wait call-back',
  DeployFailed: 'deploy failed',
  Active: 'active',
  Deleting: 'deleting',
  Error: 'error',
} as const;
export type ProvisionState = (typeof ProvisionState)[keyof typeof ProvisionState];

export const PowerState = { On: 'power on', Off: 'power off' } as const;
export type PowerState = (typeof PowerState)[keyof typeof PowerState];

/** Power actions, as Ironic's `PUT /v1/nodes/{id}/states/power` `target` values. */
export const PowerTarget = { On: 'power on', Off: 'power off', Reboot: 'rebooting' } as const;
export type PowerTarget = (typeof PowerTarget)[keyof typeof PowerTarget];

/** Provision verbs, as Ironic's `PUT /v1/nodes/{id}/states/provision` `target` values. */
export const ProvisionVerb = {
  Manage: 'manage',
  Provide: 'provide',
  Clean: 'clean',
  Deploy: 'active',
  Rebuild: 'rebuild',
  Undeploy: 'deleted',
  Abort: 'abort',
} as const;
export type ProvisionVerb = (typeof ProvisionVerb)[keyof typeof ProvisionVerb];

export const BootDevice = { Pxe: 'pxe', Disk: 'disk', Cdrom: 'cdrom', Bios: 'bios', Safe: 'safe' } as const;
export type BootDevice = (typeof BootDevice)[keyof typeof BootDevice];

/** A node as Ironic describes it (`GET /v1/nodes/{id}`), without secrets. */
export interface DriverNode {
  readonly uuid: string;
  readonly name: string | null;
  readonly resource_class: string | null;
  /** Ironic `owner`: a project id or name (free text in Ironic). */
  readonly owner: string | null;
  /** Ironic `lessee`: the project holding an active lease (set by Leasehold). */
  readonly lessee: string | null;
  /** Ironic `properties`: memory_mb, cpus, local_gb, cpu_arch, capabilities ("k:v,k:v"), any other keys. */
  readonly properties: Readonly<Record<string, unknown>>;
  readonly traits: readonly string[];
  readonly extra: Readonly<Record<string, unknown>>;
  readonly power_state: PowerState | null;
  readonly target_power_state: PowerState | null;
  readonly provision_state: string;
  readonly target_provision_state: string | null;
  readonly maintenance: boolean;
  readonly maintenance_reason: string | null;
  readonly last_error: string | null;
  readonly console_enabled: boolean;
  /** Name of the conductor holding the node's lock, or null: non-null means an operation is running. */
  readonly reservation: string | null;
  /** RFC 3339 UTC. */
  readonly updated_at: string | null;
}

/** What of a node says who holds it (drivers/lessee-mark.ts): enough to build a change of it without reading it. */
export type NodeMarks = Pick<DriverNode, 'uuid' | 'owner' | 'lessee' | 'extra'>;

/** Fields Leasehold writes on a node (Ironic `PATCH /v1/nodes/{id}`). `null` clears a field. */
export interface NodeUpdate {
  readonly owner?: string | null;
  readonly lessee?: string | null;
  /** Merged into `extra` key by key; a `null` value removes the key. */
  readonly extra?: Readonly<Record<string, string | null>>;
}

export interface ConsoleInfo {
  readonly enabled: boolean;
  /** How to reach it, e.g. `{type: 'socat', url: 'tcp://127.0.0.1:10001'}`; null while disabled. */
  readonly info: { readonly type: string; readonly url: string } | null;
}

/**
 * "May this caller still act on this node now?", asked by a driver before every attempt of a call made on a
 * caller's behalf (src/api/node-action-guard.ts builds them). Owner and operator calls have no deadline.
 */
export interface AccessGuard {
  /**
   * Resolves when the caller may still act on the node at this instant; rejects with the error the caller gets
   * for any request after its access ended (the REST API's and the gateway's 404; 403 when the policy changed).
   * The first call may rely on the decision that admitted the request (taken moments before) and the deadline;
   * every later call decides again from the store, never from a cached answer.
   */
  admit(): Promise<void>;
  /** When the caller's access ends as last decided (its lease's end), or null (no end): no retry is scheduled past it. */
  readonly deadline: Date | null;
}

/** What a call made on a caller's behalf carries. */
export interface CallOptions {
  readonly guard?: AccessGuard;
}

/** Where a VIF goes: a given NIC (Ironic port uuid), else Ironic picks a free one on the network's physnet. */
export interface VifOptions extends CallOptions {
  readonly nicId?: string;
}

export interface ProvisionOptions extends CallOptions {
  /** Manual clean steps for `clean` (Ironic's `clean_steps`). */
  readonly cleanSteps?: readonly Readonly<Record<string, unknown>>[];
}

export interface HardwareDriver {
  readonly kind: 'simulated' | 'ironic';

  /** Throws BackendUnavailableError when the backend cannot be reached. */
  ping(): Promise<void>;
  /** Every node (all pages). */
  listNodes(): Promise<readonly DriverNode[]>;
  /**
   * The nodes that may have failed: in maintenance (Ironic also puts a node there when it loses its BMC) or in
   * provision state `error` or `clean failed`. A few filtered reads, each returning a handful of nodes, so the
   * reconciler can look for failed leased nodes every few seconds without listing all of them.
   */
  listTroubledNodes(): Promise<readonly DriverNode[]>;
  getNode(id: string): Promise<DriverNode>;
  /**
   * `current`: the node as the caller just read it (or, for owner, lessee and extra alone, as the store recorded
   * it), so the driver need not read it again to build its change (a stale one costs a retry with a fresh read,
   * never a wrong write).
   */
  updateNode(id: string, update: NodeUpdate, current?: DriverNode | NodeMarks): Promise<DriverNode>;

  /** Starts a power change; returns once accepted (Ironic answers 202). The new state shows when done. */
  setPowerState(id: string, target: PowerTarget, call?: CallOptions): Promise<void>;
  setBootDevice(id: string, device: BootDevice, persistent?: boolean, call?: CallOptions): Promise<void>;
  getBootDevice(id: string): Promise<{ readonly boot_device: BootDevice | null; readonly persistent: boolean }>;

  setConsoleEnabled(id: string, enabled: boolean, call?: CallOptions): Promise<void>;
  getConsole(id: string): Promise<ConsoleInfo>;
  /** Opens a byte stream to the node's serial console (which must be enabled). */
  connectConsole(id: string): Promise<Duplex>;

  /** The node's NICs (Ironic ports), each with the VIF attached to it. */
  listNics(nodeId: string): Promise<readonly Nic[]>;
  /** Every NIC that carries a VIF, across all nodes (the reconciler's one read, paged like listNodes). */
  listVifNics(): Promise<readonly Nic[]>;
  /**
   * Plugs a Neutron port into the node as a VIF (Ironic `POST /v1/nodes/{id}/vifs`): Ironic sets the port's MAC to
   * the NIC's and, on a deployed node, binds it to the NIC's switch port. InvalidRequestError with Ironic's reason
   * when it refuses (no free NIC, a port it cannot find, already attached).
   */
  attachVif(nodeId: string, vif: string, options?: VifOptions): Promise<void>;
  /** Unplugs a VIF (Ironic unbinds the port); one no longer attached is fine. */
  detachVif(nodeId: string, vif: string, call?: CallOptions): Promise<void>;

  /** Starts a provision-state change (accepted asynchronously, as in Ironic). */
  setProvisionState(id: string, verb: ProvisionVerb, options?: ProvisionOptions): Promise<void>;

  close(): Promise<void>;
}
