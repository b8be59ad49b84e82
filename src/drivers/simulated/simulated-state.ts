import type { BootDevice, PowerState, PowerTarget } from '../hardware-driver.js';
import type { CleanStep } from './clean-steps.js';
import type { ProvisionPlan } from './provision-machine.js';

/**
 * The work a simulated node has in progress, as data: what a replica (or the same one after a restart) needs to
 * finish it when its stage ends at `due_at`. `runner` is the driver instance whose timer will finish it; another
 * one takes it over only when it is overdue (shared-hardware.ts).
 */
export type SimulatedOp =
  | { readonly kind: 'power'; readonly target: PowerTarget; readonly due_at: number; readonly runner: string }
  | { readonly kind: 'console'; readonly enabled: boolean; readonly due_at: number; readonly runner: string }
  | {
      readonly kind: 'provision';
      readonly plan: ProvisionPlan;
      readonly steps: readonly CleanStep[];
      /** The stage running now (plan.stages[index]). */
      readonly index: number;
      readonly due_at: number;
      readonly runner: string;
    };

/** What changes on a simulated machine: the document the store keeps per node (migration 0016). */
export interface SimulatedState {
  readonly owner: string | null;
  readonly lessee: string | null;
  readonly resource_class: string | null;
  readonly properties: Record<string, unknown>;
  readonly traits: readonly string[];
  readonly extra: Record<string, unknown>;
  readonly power_state: PowerState;
  readonly target_power_state: PowerState | null;
  readonly provision_state: string;
  readonly target_provision_state: string | null;
  readonly maintenance: boolean;
  readonly maintenance_reason: string | null;
  readonly last_error: string | null;
  readonly console_enabled: boolean;
  readonly updated_at: string;
  readonly boot_device: BootDevice | null;
  readonly boot_persistent: boolean;
  /** The VIF plugged into each NIC (by NIC id), null for a free one. */
  readonly vifs: Readonly<Record<string, string | null>>;
  readonly op: SimulatedOp | null;
}

/** The changing fields of a simulated node (SimulatedNode extends it; `op` is the work in progress, as data). */
export interface StatefulNode {
  owner: string | null;
  lessee: string | null;
  resource_class: string | null;
  properties: Record<string, unknown>;
  traits: string[];
  extra: Record<string, unknown>;
  power_state: PowerState;
  target_power_state: PowerState | null;
  provision_state: string;
  target_provision_state: string | null;
  maintenance: boolean;
  maintenance_reason: string | null;
  last_error: string | null;
  console_enabled: boolean;
  reservation: string | null;
  updated_at: string;
  bootDevice: BootDevice | null;
  bootPersistent: boolean;
  op: SimulatedOp | null;
}

/** The conductor name shown in `reservation` while an operation holds a node's lock. */
export const SIMULATED_HOST = 'simulated';

export function stateOf(node: StatefulNode, vifs: Readonly<Record<string, string | null>>): SimulatedState {
  return {
    owner: node.owner,
    lessee: node.lessee,
    resource_class: node.resource_class,
    properties: structuredClone(node.properties),
    traits: [...node.traits],
    extra: structuredClone(node.extra),
    power_state: node.power_state,
    target_power_state: node.target_power_state,
    provision_state: node.provision_state,
    target_provision_state: node.target_provision_state,
    maintenance: node.maintenance,
    maintenance_reason: node.maintenance_reason,
    last_error: node.last_error,
    console_enabled: node.console_enabled,
    updated_at: node.updated_at,
    boot_device: node.bootDevice,
    boot_persistent: node.bootPersistent,
    vifs: { ...vifs },
    op: node.op,
  };
}

/**
 * Puts a stored state onto a node. The lock (`reservation`) is not stored: it follows from the work in progress
 * (a power or console change, or a provision stage that holds the lock), so a process that died holding one
 * leaves no lock behind but the work, which is finished by whoever takes it over.
 */
export function applyState(node: StatefulNode, state: SimulatedState): void {
  node.owner = state.owner;
  node.lessee = state.lessee;
  node.resource_class = state.resource_class;
  node.properties = structuredClone(state.properties);
  node.traits = [...state.traits];
  node.extra = structuredClone(state.extra);
  node.power_state = state.power_state;
  node.target_power_state = state.target_power_state;
  node.provision_state = state.provision_state;
  node.target_provision_state = state.target_provision_state;
  node.maintenance = state.maintenance;
  node.maintenance_reason = state.maintenance_reason;
  node.last_error = state.last_error;
  node.console_enabled = state.console_enabled;
  node.updated_at = state.updated_at;
  node.bootDevice = state.boot_device;
  node.bootPersistent = state.boot_persistent;
  node.op = state.op;
  node.reservation = lockOf(state.op);
}

/** Who holds the node's lock while `op` runs. */
export function lockOf(op: SimulatedOp | null): string | null {
  if (!op) return null;
  if (op.kind !== 'provision') return SIMULATED_HOST;
  return op.plan.stages[op.index]?.locked ? SIMULATED_HOST : null;
}

/** Whether a stored state is one this version wrote (a document from elsewhere is ignored, not trusted). */
export function isSimulatedState(value: unknown): value is SimulatedState {
  const v = value as Partial<SimulatedState> | null;
  return typeof v === 'object' && v !== null && typeof v.provision_state === 'string' && typeof v.power_state === 'string' && typeof v.vifs === 'object';
}
