import type { Clock } from '../domain/clock.js';
import type { NewAuditEvent } from '../domain/leasing.js';
import type { Metrics } from '../domain/metrics.js';
import type { DriverNode, HardwareDriver } from '../drivers/hardware-driver.js';
import type { Logger } from '../logger.js';
import type { AllocationContext, AllocationPatch, EngineStore, LeaseTask, TaskClaim } from '../store/engine-store.js';
import type { InventorySync } from './inventory-sync.js';
import type { NetworkTeardown } from './network-teardown.js';

/** What a task's code may use. */
export interface TaskDeps {
  readonly tasks: EngineStore;
  readonly driver: HardwareDriver;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly inventory: InventorySync;
  /** The longest wait before looking again at a node that is carrying out an action (power off, cleaning). */
  readonly settleMs: number;
  /** Tenant networks (a network backend is configured): taken off a node at the end of its lease. */
  readonly networks?: NetworkTeardown | null;
  /** How long one run may watch a node carrying out an action before it hands the task back (0: never). */
  readonly watchMs: number;
  /** Where a release reports how long the node took to be clean and available again. */
  readonly metrics?: Metrics;
}

/** How a run of a task ended, short of an error (errors are retried with backoff by the engine). */
export type TaskOutcome =
  | { readonly kind: 'done' }
  /** Not finished, nothing wrong: look again at `at` (the node is busy with what we asked, or the lease moved). */
  | { readonly kind: 'later'; readonly at: Date };

export const DONE: TaskOutcome = { kind: 'done' };

/** In-process memory of one task across its runs (lost on restart, which only restarts counts). */
export interface TaskMemory {
  /** Consecutive failed runs: the backoff exponent and the event throttle. */
  failures: number;
  /** Power-off requests made by this process in the current release (see the power_off step). */
  powerOffRequests: number;
  /** Looks at a node still carrying out an action in the current step: the next look comes twice as late. */
  waits?: number;
  /** The step those looks were for. */
  waitingStep?: string | null;
}

/** The driver calls that change a node: before each, a run's deferred step is written (a row first, an action second). */
const ACTIONS: ReadonlySet<string> = new Set(['updateNode', 'setPowerState', 'setBootDevice', 'setConsoleEnabled', 'setProvisionState']);

/** One run of one task on one allocation: the context and helpers that write progress with the right ids. */
export class TaskRun {
  /** The task's ports; its driver writes what the run deferred before acting on the node (see defer()). */
  readonly deps: TaskDeps;

  constructor(
    deps: TaskDeps,
    readonly task: LeaseTask,
    readonly context: AllocationContext,
    readonly memory: TaskMemory,
    /** The claim this run holds: its writes are fenced by it. Absent: unfenced (tests running a task by hand). */
    readonly claim?: TaskClaim,
  ) {
    const driver = deps.driver;
    const guarded = new Proxy(driver, {
      get: (target, name, receiver) => {
        const value: unknown = Reflect.get(target, name, receiver);
        if (typeof name !== 'string' || !ACTIONS.has(name) || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          await this.beforeAction();
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    this.deps = { ...deps, driver: guarded };
  }

  get allocation() {
    return this.context.allocation;
  }

  get lease() {
    return this.context.lease;
  }

  get nodeId(): string {
    return this.context.allocation.node_id;
  }

  /** Ids for every log line of this run (never secrets). */
  get logFields(): Record<string, string> {
    return { task_id: this.task.id, kind: this.task.kind, lease_id: this.lease.id, allocation_id: this.allocation.id, node_id: this.nodeId };
  }

  now(): Date {
    return this.deps.clock.now();
  }

  /** While deferring (see defer()), what update() was asked to write, merged. */
  private deferred: { patch: AllocationPatch; events: NewAuditEvent[] } | null = null;

  /**
   * Records progress and events on the allocation (the store derives the lease's state in the same transaction).
   * While deferring, it is kept and written by the next flush() instead, merged with what else was asked.
   */
  update(patch: AllocationPatch, events: readonly EngineEvent[] = []): Promise<void> {
    const stamped = events.map((e) => this.event(e));
    if (this.deferred) {
      this.deferred = { patch: { ...this.deferred.patch, ...patch }, events: [...this.deferred.events, ...stamped] };
      return Promise.resolve();
    }
    return this.deps.tasks.updateAllocation(this.allocation.id, patch, this.now(), stamped, this.claim);
  }

  /**
   * From now on update() keeps what it is asked, and it is written in one transaction before the next action on
   * the node when the step or state changed (so a crash still resumes at a step no later than the node got to),
   * else when the run waits or ends (flush). A release goes through its steps in about seven transactions instead
   * of ten, merging the steps that had nothing to do and the events of the actions (issue 15: 1,000 ends were
   * bound by the store's writes).
   */
  defer(): void {
    this.deferred ??= { patch: {}, events: [] };
  }

  /** Writes what was deferred; with `stop`, stops deferring. */
  async flush(stop = true): Promise<void> {
    const deferred = this.deferred;
    this.deferred = stop || !deferred ? null : { patch: {}, events: [] };
    if (!deferred || (Object.keys(deferred.patch).length === 0 && deferred.events.length === 0)) return;
    await this.deps.tasks.updateAllocation(this.allocation.id, deferred.patch, this.now(), deferred.events, this.claim);
  }

  private async beforeAction(): Promise<void> {
    if (this.deferred && Object.keys(this.deferred.patch).length > 0) await this.flush(false);
  }

  /** Re-reads the node into the store so reads (the API, the scheduler) see the new state at once. */
  async refreshNode(): Promise<void> {
    await this.deps.inventory.refreshNode(this.nodeId);
  }

  /** Records the node as the driver just answered a change of it, so reads see the new state at once. */
  async recordNode(node: DriverNode): Promise<void> {
    await this.deps.inventory.recordNode(node);
  }

  private event(e: EngineEvent): NewAuditEvent {
    return { actor: 'engine', node_id: this.nodeId, lease_id: this.lease.id, project_id: this.lease.project_id, ...e };
  }
}

/** An event as the task code writes it: the ids and the actor are filled in by TaskRun. */
export type EngineEvent = Omit<NewAuditEvent, 'actor'>;
