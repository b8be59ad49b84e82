import type { Clock, Timer } from '../../domain/clock.js';
import { PowerState, ProvisionState } from '../hardware-driver.js';
import type { DriverNode } from '../hardware-driver.js';
import { SerialConsole } from './serial-console.js';
import type { StatefulNode } from './simulated-state.js';
import type { SimulatedNodeSpec } from './simulated-types.js';

/** One simulated machine as the driver keeps it: Ironic's node fields, its secrets, its running work. */
export interface SimulatedNode extends StatefulNode {
  readonly uuid: string;
  readonly name: string;
  /** BMC credentials: never copied into a DriverNode (nor into the stored state). */
  readonly driverInfo: Record<string, unknown>;
  /** The next step of the running provision operation, cancelled when abort or undeploy takes over. */
  provisionTimer: Timer | null;
  /** Every pending timer of this node, cancelled when it is removed or the driver closes. */
  readonly timers: Set<Timer>;
  readonly console: SerialConsole;
}

/** A node from a validated spec (see `validateInventory`), with a uuid. */
export function createSimulatedNode(
  spec: SimulatedNodeSpec & { readonly uuid: string },
  clock: Clock,
  bootOutputMs: number,
): SimulatedNode {
  const powerState = spec.power_state ?? PowerState.Off;
  const node: Omit<SimulatedNode, 'console'> = {
    uuid: spec.uuid,
    name: spec.name,
    resource_class: spec.resource_class ?? null,
    owner: spec.owner ?? null,
    lessee: spec.lessee ?? null,
    properties: structuredClone({ ...spec.properties }),
    traits: [...(spec.traits ?? [])],
    extra: structuredClone({ ...spec.extra }),
    driverInfo: structuredClone({ ...spec.driver_info }),
    power_state: powerState,
    target_power_state: null,
    provision_state: spec.provision_state ?? ProvisionState.Available,
    target_provision_state: null,
    maintenance: spec.maintenance ?? false,
    maintenance_reason: spec.maintenance ? (spec.maintenance_reason ?? null) : null,
    last_error: null,
    console_enabled: false,
    reservation: null,
    updated_at: clock.now().toISOString(),
    bootDevice: null,
    bootPersistent: false,
    op: null,
    provisionTimer: null,
    timers: new Set(),
  };
  const full = node as SimulatedNode;
  (full as { console: SerialConsole }).console = new SerialConsole({
    clock,
    node: () => full,
    bootOutputMs,
    poweredOn: powerState === PowerState.On,
  });
  return full;
}

/** The public view: deep copies, so no caller can change the simulated hardware by mutating a result. */
export function toDriverNode(node: SimulatedNode): DriverNode {
  return {
    uuid: node.uuid,
    name: node.name,
    resource_class: node.resource_class,
    owner: node.owner,
    lessee: node.lessee,
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
    reservation: node.reservation,
    updated_at: node.updated_at,
  };
}
