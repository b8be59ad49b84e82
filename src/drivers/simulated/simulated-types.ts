import type { PowerState } from '../hardware-driver.js';

/**
 * A node as an operator would enrol it in Ironic (`POST /v1/nodes` plus the fields Ironic fills in), the input of
 * the simulated driver and of `LEASEHOLD_SIMULATED_NODES`.
 */
export interface SimulatedNodeSpec {
  /** Generated from `name` when missing (a stable UUID v4-format id, so data stays attached across restarts). */
  readonly uuid?: string;
  readonly name: string;
  readonly owner?: string | null;
  readonly lessee?: string | null;
  readonly resource_class?: string | null;
  /** memory_mb, cpus, local_gb, cpu_arch, capabilities ("k:v,k:v"), any other keys (e.g. gpus). */
  readonly properties: Readonly<Record<string, unknown>>;
  readonly traits?: readonly string[];
  readonly extra?: Readonly<Record<string, unknown>>;
  /** BMC address and credentials: kept inside the driver, never returned by any method. */
  readonly driver_info?: Readonly<Record<string, unknown>>;
  /** Default `available`. */
  readonly provision_state?: string;
  /** Default `power off`. */
  readonly power_state?: PowerState;
  readonly maintenance?: boolean;
  readonly maintenance_reason?: string | null;
}

/** How long simulated operations take, in milliseconds of the driver's clock. */
export interface SimulatedTimings {
  /** A power on / off / reboot. */
  readonly powerMs: number;
  /** Setting the boot device (a synchronous call in Ironic; 0 answers at once). */
  readonly bootDeviceMs: number;
  /** A whole cleaning (automated or manual), ramdisk boot to power off. */
  readonly cleanMs: number;
  /** A whole deployment, `deploying` to `active`. */
  readonly deployMs: number;
  /** The `deleting` (tear down) phase of an undeploy; the cleaning after it takes `cleanMs`. */
  readonly undeployMs: number;
  /** Verifying the BMC on `manage` from `enroll`. */
  readonly manageMs: number;
  /** Enabling or disabling the serial console. */
  readonly consoleMs: number;
  /** The time the boot messages take to scroll by on a connected console (0 prints them at once). */
  readonly bootOutputMs: number;
}

/** Demo defaults: slow enough to watch the states change in the UI, fast enough not to bore. */
export const DEFAULT_TIMINGS: SimulatedTimings = {
  powerMs: 2_000,
  bootDeviceMs: 0,
  cleanMs: 20_000,
  deployMs: 15_000,
  undeployMs: 5_000,
  manageMs: 1_500,
  consoleMs: 1_000,
  bootOutputMs: 4_000,
};

/** A fault that hits every node (`true`) or only the nodes named (uuid or name). */
export type NodeFault = boolean | readonly string[];

/** Injectable faults; set at construction or at run time with `setFaults()`. */
export interface SimulatedFaults {
  /** The running clean step fails: `clean failed`, `last_error` set, maintenance on (as Ironic does). */
  readonly cleanFailure?: NodeFault;
  /** Writing the image fails: `deploy failed` with `last_error`. */
  readonly deployFailure?: NodeFault;
  /** The BMC does not answer a power request: power state unchanged, `last_error` set. */
  readonly powerFailure?: NodeFault;
  /** Ironic cannot be reached: every port method throws BackendUnavailableError. */
  readonly unavailable?: boolean;
  /** Added to every port call, like a slow network to Ironic. */
  readonly latencyMs?: number;
}

export function faultHits(fault: NodeFault | undefined, node: { readonly uuid: string; readonly name: string }): boolean {
  if (fault === undefined || fault === false) return false;
  if (fault === true) return true;
  return fault.includes(node.uuid) || fault.includes(node.name);
}
