import type { Clock } from '../domain/clock.js';
import type { NewAuditEvent } from '../domain/leasing.js';
import type { DriverNode, HardwareDriver } from '../drivers/hardware-driver.js';
import type { Logger } from '../logger.js';
import type { AllocationContext, AllocationPatch, EngineStore, LeaseTask, TaskClaim } from '../store/engine-store.js';
import type { InventorySync } from './inventory-sync.js';

/** What a task's code may use. */
export interface TaskDeps {
  readonly tasks: EngineStore;
  readonly driver: HardwareDriver;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly inventory: InventorySync;
  /** The longest wait before looking again at a node that is carrying out an action (power off, cleaning). */
  readonly settleMs: number;
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

/** One run of one task on one allocation: the context and helpers that write progress with the right ids. */
export class TaskRun {
  constructor(
    readonly deps: TaskDeps,
    readonly task: LeaseTask,
    readonly context: AllocationContext,
    readonly memory: TaskMemory,
    /** The claim this run holds: its writes are fenced by it. Absent: unfenced (tests running a task by hand). */
    readonly claim?: TaskClaim,
  ) {}

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

  /** Records progress and events on the allocation (the store derives the lease's state in the same transaction). */
  update(patch: AllocationPatch, events: readonly EngineEvent[] = []): Promise<void> {
    return this.deps.tasks.updateAllocation(this.allocation.id, patch, this.now(), events.map((e) => this.event(e)), this.claim);
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
