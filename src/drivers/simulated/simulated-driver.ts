import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { systemClock } from '../../domain/clock.js';
import type { Clock, Timer } from '../../domain/clock.js';
import {
  AlreadyExistsError,
  BackendUnavailableError,
  InvalidRequestError,
  InvalidStateError,
  NodeBusyError,
  NotFoundError,
} from '../../domain/errors.js';
import { BootDevice, PowerState, PowerTarget, ProvisionState, ProvisionVerb } from '../hardware-driver.js';
import type { CallOptions, ConsoleInfo, DriverNode, HardwareDriver, NodeUpdate, ProvisionOptions, VifOptions } from '../hardware-driver.js';
import type { Nic } from '../../domain/networks.js';
import type { BootKind } from './boot-output.js';
import { ironicMessages } from './ironic-messages.js';
import { validateInventory } from './parse-inventory.js';
import { AUTOMATED_CLEAN_STEP, SUPPORTED_CLEAN_STEPS, cleanStepsFor, describeStep } from './clean-steps.js';
import type { CleanStep } from './clean-steps.js';
import { StageCheck, allowedInMaintenance, operationName, planProvision, stageFailure } from './provision-machine.js';
import type { ProvisionPlan, StageFailure } from './provision-machine.js';
import type { SimulatedNetworks } from './simulated-networks.js';
import { SimulatedNics } from './simulated-nics.js';
import { createSimulatedNode, toDriverNode } from './simulated-node.js';
import type { SimulatedNode } from './simulated-node.js';
import { DEFAULT_TIMINGS, faultHits } from './simulated-types.js';
import { SharedHardware } from './shared-hardware.js';
import { applyState, SIMULATED_HOST, type SimulatedOp } from './simulated-state.js';
import type { SimulatedHardwareStore } from '../../domain/simulated-hardware-store.js';
import type { Logger } from '../../logger.js';
import type { SimulatedFaults, SimulatedNodeSpec, SimulatedTimings } from './simulated-types.js';

export type { NodeFault, SimulatedFaults, SimulatedNodeSpec, SimulatedTimings } from './simulated-types.js';

export interface SimulatedDriverOptions {
  readonly nodes: readonly SimulatedNodeSpec[];
  /** Every delay runs on this clock (a ManualClock in tests). Default: the system clock. */
  readonly clock?: Clock;
  /** Operation durations; missing ones take the demo defaults (DEFAULT_TIMINGS). */
  readonly timings?: Partial<SimulatedTimings>;
  readonly faults?: SimulatedFaults;
  /** The simulated network service the nodes' NICs are cabled to (VIFs must be its ports); none: any VIF id goes. */
  readonly networks?: SimulatedNetworks;
}

const HOST = SIMULATED_HOST;
const VERBS: readonly string[] = Object.values(ProvisionVerb);
const POWER_TARGETS: readonly string[] = Object.values(PowerTarget);
const BOOT_DEVICES: readonly string[] = Object.values(BootDevice);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * In-process bare-metal hardware behind the HardwareDriver port, the same idea as Ironic's `fake-hardware` but
 * with visible timings: calls validate and return at once (Ironic's 202), the node shows `target_*` and a
 * `reservation` while the work runs on the injected clock, then its new state. Ironic's state machine, lock
 * errors and messages are mirrored so code written against this driver behaves the same against Ironic.
 *
 * Maintenance: provision verbs other than `manage` and `abort` are refused while a node is in maintenance;
 * power, boot device, console and updates still work (as in Ironic). A failed clean step puts the node into
 * maintenance; the operator clears it with `setMaintenance(id, false)`.
 *
 * Faults (`setFaults`) are read when the affected step ends, so a fault set while an operation runs hits it.
 */
export class SimulatedDriver implements HardwareDriver {
  readonly kind = 'simulated' as const;
  readonly timings: SimulatedTimings;
  private readonly clock: Clock;
  private readonly nodes = new Map<string, SimulatedNode>();
  private currentFaults: SimulatedFaults;
  private closed = false;
  private readonly nics: SimulatedNics;
  /** The store the hardware lives in (share()), or null: this process's alone, gone with it (tests, the bench). */
  private shared: SharedHardware | null = null;
  /** This instance, as the runner of the work it starts (simulated-state.ts). */
  private readonly runner = randomUUID();

  constructor(options: SimulatedDriverOptions) {
    this.clock = options.clock ?? systemClock;
    // Keys given as undefined keep their default (a spread would overwrite it).
    const given = Object.entries(options.timings ?? {}).filter(([, value]) => value !== undefined);
    this.timings = { ...DEFAULT_TIMINGS, ...Object.fromEntries(given) };
    for (const [key, value] of Object.entries(this.timings)) {
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
        throw new InvalidRequestError(`timings.${key}: expected a non-negative number of milliseconds`);
      }
    }
    this.currentFaults = { ...options.faults };
    this.nics = new SimulatedNics(options.networks ?? null);
    options.networks?.setPlugLookup((port) => {
      const plug = this.nics.plugOf(port);
      if (!plug) return null;
      return { node_id: plug.node_id, deployed: this.nodes.get(plug.node_id)?.provision_state === ProvisionState.Active };
    });
    for (const spec of validateInventory(options.nodes, 'nodes')) this.insert(spec);
  }

  /** The faults in force (a copy). */
  get faults(): SimulatedFaults {
    return { ...this.currentFaults };
  }

  /** Changes some faults and keeps the others: `setFaults({ unavailable: false })`. */
  setFaults(patch: SimulatedFaults): void {
    this.currentFaults = { ...this.currentFaults, ...patch };
  }

  clearFaults(): void {
    this.currentFaults = {};
  }

  /**
   * Keeps the hardware in `store` from now on (migration 0016): nodes stored before take their stored state (a
   * restart finds its machines as it left them), new ones are enrolled, and every instance sharing the store
   * drives the same machines (shared-hardware.ts).
   */
  async share(store: SimulatedHardwareStore, logger?: Logger): Promise<void> {
    const shared = new SharedHardware(
      store,
      {
        node: (uuid) => this.nodes.get(uuid),
        vifsOf: (uuid) => this.nics.vifsOf(uuid),
        restore: (node, state) => {
          applyState(node, state);
          this.nics.restoreVifs(node.uuid, state.vifs);
        },
        takeOver: (node) => {
          const op = node.op;
          if (op) this.completeOp(node as SimulatedNode, op);
        },
      },
      this.clock,
      this.runner,
      logger,
    );
    await shared.open([...this.nodes.values()]);
    this.shared = shared;
  }

  async ping(): Promise<void> {
    await this.enter();
  }

  async listNodes(): Promise<readonly DriverNode[]> {
    await this.enter();
    return [...this.nodes.values()].map(toDriverNode);
  }

  async listTroubledNodes(): Promise<readonly DriverNode[]> {
    await this.enter();
    return [...this.nodes.values()].filter((n) => n.maintenance || n.provision_state === 'error' || n.provision_state === 'clean failed').map(toDriverNode);
  }

  async getNode(id: string): Promise<DriverNode> {
    await this.enter();
    return toDriverNode(this.find(id));
  }

  async updateNode(id: string, update: NodeUpdate): Promise<DriverNode> {
    await this.enter();
    const node = this.find(id);
    this.assertUnlocked(node);
    for (const field of ['owner', 'lessee'] as const) {
      const value: unknown = update[field];
      if (value !== undefined && value !== null && (typeof value !== 'string' || value.length > 255)) {
        throw new InvalidRequestError(`${field}: expected a string of at most 255 characters or null`);
      }
    }
    const extra: Record<string, unknown> = { ...update.extra };
    for (const [key, value] of Object.entries(extra)) {
      if (value !== null && typeof value !== 'string') throw new InvalidRequestError(`extra.${key}: expected a string or null`);
    }
    if (update.owner !== undefined) node.owner = update.owner;
    if (update.lessee !== undefined) node.lessee = update.lessee;
    for (const [key, value] of Object.entries(extra)) {
      if (value === null) delete node.extra[key];
      else node.extra[key] = value;
    }
    this.touch(node);
    await this.shared?.settle(node);
    return toDriverNode(node);
  }

  async setPowerState(id: string, target: PowerTarget, call: CallOptions = {}): Promise<void> {
    await this.enter();
    await call.guard?.admit(); // one attempt, admitted like every attempt of a real driver
    const node = this.find(id);
    if (!POWER_TARGETS.includes(target)) {
      throw new InvalidRequestError(`invalid power target ${JSON.stringify(target)} (expected ${POWER_TARGETS.join(', ')})`);
    }
    this.assertUnlocked(node);
    node.last_error = null;
    node.target_power_state = target === PowerTarget.Off ? PowerState.Off : PowerState.On;
    node.reservation = HOST;
    this.start(node, { kind: 'power', target, due_at: this.dueIn(this.timings.powerMs), runner: this.runner }, this.timings.powerMs);
    await this.shared?.settle(node);
  }

  async setBootDevice(id: string, device: BootDevice, persistent = false, call: CallOptions = {}): Promise<void> {
    await this.enter();
    await call.guard?.admit();
    const node = this.find(id);
    if (!BOOT_DEVICES.includes(device)) throw new InvalidRequestError(`Invalid boot device ${device} specified.`);
    this.assertUnlocked(node);
    // Ironic sets the boot device within the request (no 202): the caller waits, the node stays locked meanwhile.
    if (this.timings.bootDeviceMs > 0) {
      node.reservation = HOST;
      try {
        await this.clock.sleep(this.timings.bootDeviceMs);
      } finally {
        node.reservation = null;
      }
    }
    node.bootDevice = device;
    node.bootPersistent = persistent;
    this.touch(node);
    await this.shared?.settle(node);
  }

  async getBootDevice(id: string): Promise<{ readonly boot_device: BootDevice | null; readonly persistent: boolean }> {
    await this.enter();
    const node = this.find(id);
    return { boot_device: node.bootDevice, persistent: node.bootPersistent };
  }

  async setConsoleEnabled(id: string, enabled: boolean, call: CallOptions = {}): Promise<void> {
    await this.enter();
    await call.guard?.admit();
    const node = this.find(id);
    this.assertUnlocked(node);
    if (node.console_enabled === enabled) return; // Ironic accepts and does nothing
    node.reservation = HOST;
    this.start(node, { kind: 'console', enabled, due_at: this.dueIn(this.timings.consoleMs), runner: this.runner }, this.timings.consoleMs);
    await this.shared?.settle(node);
  }

  async getConsole(id: string): Promise<ConsoleInfo> {
    await this.enter();
    const node = this.find(id);
    return {
      enabled: node.console_enabled,
      info: node.console_enabled ? { type: 'simulated', url: `simulated://${node.uuid}` } : null,
    };
  }

  async connectConsole(id: string): Promise<Duplex> {
    await this.enter();
    const node = this.find(id);
    if (!node.console_enabled) throw new InvalidStateError(ironicMessages.consoleDisabled(node.uuid), { details: { node: node.uuid } });
    return node.console.open();
  }

  async listNics(nodeId: string): Promise<readonly Nic[]> {
    await this.enter();
    return this.nics.list(this.find(nodeId).uuid);
  }

  async listVifNics(): Promise<readonly Nic[]> {
    await this.enter();
    return this.nics.withVifs();
  }

  async attachVif(nodeId: string, vif: string, options: VifOptions = {}): Promise<void> {
    await this.enter();
    await options.guard?.admit();
    const node = this.find(nodeId);
    this.assertUnlocked(node); // Ironic takes the node's lock to attach
    this.nics.attach(node.uuid, vif, options.nicId);
    this.touch(node);
    await this.shared?.settle(node);
  }

  async detachVif(nodeId: string, vif: string, call: CallOptions = {}): Promise<void> {
    await this.enter();
    await call.guard?.admit();
    const node = this.find(nodeId);
    this.assertUnlocked(node);
    this.nics.detach(node.uuid, vif);
    this.touch(node);
    await this.shared?.settle(node);
  }

  async setProvisionState(id: string, verb: ProvisionVerb, options: ProvisionOptions = {}): Promise<void> {
    await this.enter();
    await options.guard?.admit();
    const node = this.find(id);
    if (!VERBS.includes(verb)) {
      throw new InvalidRequestError(`invalid provision verb ${JSON.stringify(verb)} (expected ${VERBS.join(', ')})`);
    }
    this.assertUnlocked(node);
    const plan = planProvision(node.provision_state, verb, { uuid: node.uuid, timings: this.timings });
    if (!plan) {
      throw new InvalidStateError(ironicMessages.invalidState(verb, node.uuid, node.provision_state), {
        details: { node: node.uuid, provision_state: node.provision_state, verb },
      });
    }
    if (node.maintenance && !allowedInMaintenance(verb)) {
      throw new InvalidStateError(ironicMessages.inMaintenance(operationName(verb), node.uuid), {
        details: { node: node.uuid, maintenance: true, verb },
      });
    }
    const steps = cleanStepsFor(verb, options);
    // Undeploy from `wait call-back` and abort from `clean wait` take over from the work in progress.
    node.provisionTimer?.cancel();
    node.provisionTimer = null;
    if (plan.stages.length > 0) node.last_error = null;
    this.runStage(node, plan, steps, 0);
    await this.shared?.settle(node);
  }

  /** Resolves when every change so far is in the store (share()); at once when the hardware is not shared. */
  async flush(): Promise<void> {
    await this.shared?.flush();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.shared?.close();
    for (const node of this.nodes.values()) this.dispose(node);
  }

  /** Operator helper: enrols a node (as `baremetal node create` plus walking it to its start state would). */
  addNode(spec: SimulatedNodeSpec): DriverNode {
    const [valid] = validateInventory([spec], 'node');
    const uuid = valid?.uuid ?? '';
    const clash = [...this.nodes.values()].find((n) => n.uuid === uuid || n.name === valid?.name);
    if (!valid || clash) throw new AlreadyExistsError(`a node with uuid ${uuid} or name ${JSON.stringify(spec.name)} already exists`);
    const node = this.insert(valid);
    this.shared?.enrolLater(node);
    return toDriverNode(node);
  }

  /** Operator helper: the node disappears from Ironic (its work stops, its console viewers are cut). */
  removeNode(id: string): void {
    const node = this.find(id);
    this.dispose(node);
    this.nodes.delete(node.uuid);
    this.nics.remove(node.uuid);
    this.shared?.forget(node.uuid);
  }

  /** Operator helper: properties change in Ironic (re-inspection, an edit); a `null` value removes the key. */
  updateProperties(id: string, properties: Readonly<Record<string, unknown>>): DriverNode {
    const node = this.find(id);
    for (const [key, value] of Object.entries(properties)) {
      if (value === null) delete node.properties[key];
      else node.properties[key] = structuredClone(value);
    }
    this.touch(node);
    return toDriverNode(node);
  }

  /** Operator helper: Ironic's `PUT/DELETE /v1/nodes/{id}/maintenance`. Turning it off clears the reason. */
  setMaintenance(id: string, on: boolean, reason: string | null = null): DriverNode {
    const node = this.find(id);
    node.maintenance = on;
    node.maintenance_reason = on ? reason : null;
    this.touch(node);
    return toDriverNode(node);
  }

  private insert(spec: SimulatedNodeSpec): SimulatedNode {
    const node = createSimulatedNode({ ...spec, uuid: spec.uuid ?? '' }, this.clock, this.timings.bootOutputMs);
    this.nodes.set(node.uuid, node);
    this.nics.add(node.uuid);
    return node;
  }

  /** Every port call starts here: a closed driver or an unreachable Ironic fails the call, latency is added. */
  private async enter(): Promise<void> {
    if (this.closed) throw new BackendUnavailableError('the simulated hardware driver is closed');
    const latency = this.currentFaults.latencyMs ?? 0;
    if (latency > 0) await this.clock.sleep(latency);
    if (this.currentFaults.unavailable) {
      throw new BackendUnavailableError('Ironic is unreachable (simulated outage): connection refused');
    }
    // What other instances did to the machines since the last call (one query; nothing when nothing changed).
    await this.shared?.pull();
  }

  /** A node by uuid or name, as Ironic resolves `{node_ident}`. */
  private find(id: string): SimulatedNode {
    const node = UUID.test(id)
      ? this.nodes.get(id.toLowerCase())
      : [...this.nodes.values()].find((candidate) => candidate.name === id);
    if (!node) throw new NotFoundError('node', id);
    return node;
  }

  private assertUnlocked(node: SimulatedNode): void {
    if (node.reservation !== null) {
      throw new NodeBusyError(ironicMessages.nodeLocked(node.uuid, node.reservation), {
        details: { node: node.uuid, reservation: node.reservation },
      });
    }
  }

  private touch(node: SimulatedNode): void {
    node.updated_at = this.clock.now().toISOString();
    this.shared?.changed(node);
  }

  private dueIn(ms: number): number {
    return this.clock.now().getTime() + ms;
  }

  /** Starts a piece of work: recorded on the node (so another instance can finish it), finished by a timer here. */
  private start(node: SimulatedNode, op: SimulatedOp, ms: number): Timer {
    node.op = op;
    this.touch(node);
    return this.schedule(node, ms, () => this.completeOp(node, op));
  }

  /**
   * Ends the current stage of `op` (a timer's, or work taken over from another instance). Nothing happens when the
   * node's work is no longer `op` (aborted, replaced, or finished elsewhere meanwhile).
   */
  private completeOp(node: SimulatedNode, op: SimulatedOp): void {
    if (node.op !== op) return;
    switch (op.kind) {
      case 'power':
        node.op = null;
        node.reservation = null;
        node.target_power_state = null;
        if (faultHits(this.currentFaults.powerFailure, node)) node.last_error = ironicMessages.powerFailed(op.target);
        else this.applyPower(node, op.target, 'os');
        this.touch(node);
        return;
      case 'console':
        node.op = null;
        node.reservation = null;
        node.console_enabled = op.enabled;
        if (!op.enabled) node.console.closeViewers();
        this.touch(node);
        return;
      case 'provision': {
        node.provisionTimer = null;
        const stage = op.plan.stages[op.index];
        const failed = stage?.check ? this.failingStep(node, stage.check, op.steps) : null;
        if (stage?.check && failed !== null) return this.failPlan(node, stageFailure(stage.check, node.uuid, failed));
        this.runStage(node, op.plan, op.steps, op.index + 1);
      }
    }
  }

  private schedule(node: SimulatedNode, ms: number, fn: () => void): Timer {
    const timer = this.clock.setTimer(ms, () => {
      node.timers.delete(timer);
      if (!this.closed) fn();
    });
    node.timers.add(timer);
    return timer;
  }

  private dispose(node: SimulatedNode): void {
    for (const timer of node.timers) timer.cancel();
    node.timers.clear();
    node.provisionTimer = null;
    node.console.dispose();
  }

  /** Changes the machine's power and tells its serial line (boot messages, or silence). */
  private applyPower(node: SimulatedNode, target: PowerTarget, boot: BootKind): void {
    const wasOn = node.power_state === PowerState.On;
    if (target === PowerTarget.Off) {
      node.power_state = PowerState.Off;
      if (wasOn) node.console.powerOff();
      return;
    }
    node.power_state = PowerState.On;
    if (target === PowerTarget.Reboot || !wasOn) node.console.boot(boot);
  }

  private runStage(node: SimulatedNode, plan: ProvisionPlan, steps: readonly CleanStep[], index: number): void {
    const stage = plan.stages[index];
    if (!stage) return this.finishPlan(node, plan);
    node.provision_state = stage.state;
    node.target_provision_state = stage.target;
    node.reservation = stage.locked ? HOST : null;
    if (stage.power) this.applyPower(node, stage.power, stage.boot ?? 'os');
    node.provisionTimer = this.start(node, { kind: 'provision', plan, steps, index, due_at: this.dueIn(stage.ms), runner: this.runner }, stage.ms);
  }

  /** The step that fails the check (described as Ironic logs it), or null when it passes. */
  private failingStep(node: SimulatedNode, check: StageCheck, steps: readonly CleanStep[]): string | null {
    const faults = this.currentFaults;
    switch (check) {
      case StageCheck.Verify:
        return faultHits(faults.powerFailure, node) ? 'power.validate' : null;
      case StageCheck.CleanSteps: {
        const unsupported = steps.find((s) => !SUPPORTED_CLEAN_STEPS.includes(`${s.interface}.${s.step}`));
        return unsupported ? describeStep(unsupported) : null;
      }
      case StageCheck.CleanRun:
        return faultHits(faults.cleanFailure, node) ? describeStep(steps[0] ?? AUTOMATED_CLEAN_STEP) : null;
      case StageCheck.DeployRun:
        return faultHits(faults.deployFailure, node) ? 'deploy.write_image' : null;
    }
  }

  private failPlan(node: SimulatedNode, failure: StageFailure): void {
    node.op = null;
    node.provision_state = failure.state;
    if (!failure.keepTarget) node.target_provision_state = null;
    node.reservation = null;
    node.last_error = failure.lastError;
    if (failure.maintenance) {
      node.maintenance = true;
      node.maintenance_reason = failure.lastError;
    }
    if (failure.power) this.applyPower(node, failure.power, 'os');
    this.touch(node);
  }

  private finishPlan(node: SimulatedNode, plan: ProvisionPlan): void {
    node.op = null;
    node.provision_state = plan.final;
    if (!plan.keepTarget) node.target_provision_state = null;
    node.reservation = null;
    if (plan.lastError) node.last_error = plan.lastError;
    if (plan.finalPower) this.applyPower(node, plan.finalPower, 'os');
    if (plan.final === ProvisionState.Active) {
      // A deployed node boots from its disk from now on (Ironic's local boot sets it persistently).
      node.bootDevice = BootDevice.Disk;
      node.bootPersistent = true;
    }
    this.touch(node);
  }
}
