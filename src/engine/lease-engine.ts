import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock, Timer } from '../domain/clock.js';
import { ClaimLostError, ErrorCode, isLeaseholdError } from '../domain/errors.js';
import { FINAL_ALLOCATION_STATES } from '../domain/leasing.js';
import { noMetrics, type Metrics, type TaskRunOutcome } from '../domain/metrics.js';
import type { HardwareDriver } from '../drivers/hardware-driver.js';
import type { Logger } from '../logger.js';
import type { LeaseTask, TaskLane } from '../store/engine-store.js';
import type { Store } from '../store/store.js';
import { DEFAULT_RETRY, backoffMs, isReportedFailure } from './backoff.js';
import type { RetryPolicy } from './backoff.js';
import type { InventorySync } from './inventory-sync.js';
import type { NetworkTeardown } from './network-teardown.js';
import { runEndTask } from './release-steps.js';
import { runStartTask } from './start-task.js';
import { runSubleaseEndTask } from './sublease-end.js';
import { DONE, TaskRun } from './task-run.js';
import { BatchingEngineStore } from './batching-engine-store.js';
import { Semaphore, bounded, nextTicket } from './semaphore.js';
import type { TaskDeps, TaskMemory, TaskOutcome } from './task-run.js';

export interface LeaseEngineOptions {
  readonly store: Store;
  readonly driver: HardwareDriver;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly inventory: InventorySync;
  /** Names this replica's claims. Default: host, pid and a random suffix. */
  readonly workerId?: string;
  /**
   * How long a claim lasts past the worker's last heartbeat: a task whose worker died is taken over after this.
   * While the engine runs (start()), it renews its claims every third of this. Default 5 s.
   */
  readonly claimMs?: number;
  /**
   * Tasks of the release queue (power off, cleaning, waiting for it) in flight at once. Default 200: a task that
   * waits for the node costs nothing but its claim, and the store calls of the tasks in flight are written in
   * batches (BatchingEngineStore), so more in flight means fewer, larger transactions (issue 15).
   */
  readonly batch?: number;
  /** Hardware calls of the release queue at once, whatever the tasks in flight. Default 20, at most `batch`. */
  readonly releaseConcurrency?: number;
  /**
   * Hardware calls of the mark queue (Ironic's lessee set or cleared) at once. Default 4, at most `batch`: one
   * standalone Ironic does the same ≈ 35 node PATCHes a second with 1 to 20 concurrent callers (measured
   * 2026-11-26); more only lengthens each PATCH inside Ironic, where the calls no longer go in the engine's order,
   * so a lease starting with a 100-node one waited 1.2 s for its 4 marks with 12 (0.4 s with 4). 48 mark tasks
   * are in flight whatever this is, so their store writes go in batches while the next PATCHes are under way.
   */
  readonly markConcurrency?: number;
  /** Backoff for failed runs. Default 1 s doubling to 60 s. */
  readonly retry?: RetryPolicy;
  /** Safety re-check, for tasks written by other replicas. Default 10 s. */
  readonly pollMs?: number;
  /**
   * The longest wait before looking again at a node carrying out an action (power off, cleaning). The first look
   * comes after 50 ms and each next one twice as late, up to this. Default 1 s.
   */
  readonly settleMs?: number;
  /** Tenant networks, when a network backend is configured: the release takes them off the node. */
  readonly networks?: NetworkTeardown | null;
  /**
   * How long one run of a release may watch a node carrying out an action (a power off, a cleaning) before it
   * hands the task back to be looked at again later. Default 2 s: simulated actions and Ironic's fake power are
   * over within it, so a release is one run instead of four (tests on a manual clock set 0).
   */
  readonly watchMs?: number;
  /** Where each task run (its lag and outcome) and each cleaning's duration are reported. */
  readonly metrics?: Metrics;
}

/** Claims one runDue makes at most, so a flood of due work still lets the timer re-arm. */
const MAX_CLAIMS_PER_RUN = 5_000;
const DEFAULT_MARK_CONCURRENCY = 4;
/**
 * Mark tasks in flight, whatever the calls at once: their store writes go in batches of about this many. Tied to
 * the calls (4 × 4 = 16), 1,000 simulated ends took 6.8 s instead of 3.5 s (four times as many transactions).
 */
const MARK_IN_FLIGHT = 48;
const DEFAULT_RELEASE_BATCH = 200;
const DEFAULT_RELEASE_CONCURRENCY = 20;
const LANES: readonly TaskLane[] = ['mark', 'release'];
/** Tasks whose failure counts are kept in memory at most. */
const MAX_REMEMBERED_TASKS = 10_000;
/** When something is due but not claimable (held by another replica's live claim), wait at least this. */
const IDLE_FLOOR_MS = 500;
/**
 * Claim length. Issue 11 measured 66 s of lost time after `kill -9` of both replicas with the old fixed 60 s claim;
 * with 5 s renewed every ~1.7 s, a restarted replica resumes a dead one's tasks ≤ 5 s after its last heartbeat,
 * and a live worker keeps its claim through a slow Ironic call (30 s timeout) because the heartbeat renews it.
 */
export const DEFAULT_CLAIM_MS = 5_000;
/** After the store failed to answer, look again after this, doubling up to pollMs (it comes back by itself). */
const STORE_RETRY_MS = 1_000;

/**
 * The lease engine: runs the due `start` and `end` tasks that the leasing store writes with each lease change.
 *
 * Timing: after every run it asks the store for the next due time and arms one timer for it (capped by the
 * `pollMs` safety re-check that picks up tasks other replicas wrote), so work starts within moments of its due
 * time. `wake()` re-arms at once (the API calls it after creating or changing a lease in this process).
 *
 * Replicas: tasks are claimed with FOR UPDATE SKIP LOCKED and a short claim renewed by the worker's heartbeat,
 * so any number of engines can share a store; one that dies mid-task leaves it to the others within `claimMs`,
 * and the task resumes at the step recorded on the allocation. Every progress write is fenced by the claim.
 *
 * Failures: NodeBusy, BackendUnavailable, a blocked node and unexpected errors are retried with exponential
 * backoff (an `allocation.<kind>_error` event on the first failure and every tenth); a task is only completed
 * once its allocation reached a final state or has nothing left to do.
 */
export class LeaseEngine {
  readonly workerId: string;
  private readonly deps: TaskDeps;
  /** Each queue's tasks see the driver through their queue's bound on hardware calls at once. */
  /** Per lane, a task's driver: its calls bounded by the lane's semaphore, in line by the task's ticket. */
  private readonly laneDriver: Record<TaskLane, (ticket: number) => TaskDeps['driver']>;
  /** Tasks in flight per queue. */
  private readonly inFlight: Record<TaskLane, number>;
  private readonly claimMs: number;
  private readonly retry: RetryPolicy;
  private readonly pollMs: number;
  private readonly memory = new Map<string, TaskMemory>();
  private started = false;
  private timer: Timer | null = null;
  private heartbeat: Timer | null = null;
  /** Consecutive failures to reach the store from the timer loop (sets the next look sooner than pollMs). */
  private storeFailures = 0;
  /** The run in progress, and the one queued behind it (shared by every caller meanwhile). */
  private active: Promise<number> | null = null;
  private queued: Promise<number> | null = null;

  constructor(options: LeaseEngineOptions) {
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.claimMs = options.claimMs ?? DEFAULT_CLAIM_MS;
    const batch = Math.max(1, options.batch ?? DEFAULT_RELEASE_BATCH);
    const markCalls = Math.max(1, Math.min(batch, options.markConcurrency ?? DEFAULT_MARK_CONCURRENCY));
    const releaseCalls = Math.max(1, Math.min(batch, options.releaseConcurrency ?? DEFAULT_RELEASE_CONCURRENCY));
    this.inFlight = { mark: Math.min(batch, MARK_IN_FLIGHT), release: batch };
    this.retry = options.retry ?? DEFAULT_RETRY;
    this.pollMs = options.pollMs ?? 10_000;
    this.deps = {
      tasks: new BatchingEngineStore(options.store.tasks),
      driver: options.driver,
      clock: options.clock,
      logger: options.logger.child({ component: 'lease-engine', worker: this.workerId }),
      inventory: options.inventory,
      settleMs: options.settleMs ?? 1_000,
      networks: options.networks ?? null,
      watchMs: options.watchMs ?? 2_000,
      metrics: options.metrics ?? noMetrics,
    };
    // Access in Ironic first: a release's call waits while lessee marks are being set or cleared (semaphore.ts).
    const marks = new Semaphore(markCalls);
    const releases = new Semaphore(releaseCalls);
    this.laneDriver = {
      mark: (ticket) => bounded(options.driver, marks, undefined, ticket),
      release: (ticket) => bounded(options.driver, releases, marks, ticket),
    };
  }

  /** Runs what is due now, then keeps running due work on its timer until stop(). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.deps.logger.info({ claim_ms: this.claimMs, poll_ms: this.pollMs }, 'lease engine started');
    this.beat();
    this.wake();
  }

  /** Stops the timer and waits for the tasks running now (they finish their current step). */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    this.timer?.cancel();
    this.timer = null;
    // Claims are renewed until the running tasks have finished (completed or re-scheduled, releasing them).
    await Promise.allSettled([this.active, this.queued]);
    this.heartbeat?.cancel();
    this.heartbeat = null;
    this.deps.logger.info('lease engine stopped');
  }

  /**
   * The worker's heartbeat: every third of the claim length its claims are extended, so they last exactly as
   * long as this process lives and reaches the store. A missed beat (store unreachable) is logged; the claims
   * may then expire and be taken over, which the fenced writes (ClaimLostError) make safe.
   */
  private beat(): void {
    this.heartbeat = this.deps.clock.setTimer(Math.max(1, Math.floor(this.claimMs / 3)), () => {
      this.heartbeat = null;
      const { tasks, clock, logger } = this.deps;
      tasks
        .renewClaims(this.workerId, clock.now(), this.claimMs)
        .catch((err: unknown) => logger.warn({ error: err instanceof Error ? err.message : String(err) }, 'lease engine: could not renew its claims'))
        .finally(() => {
          if (this.started || this.active || this.queued) this.beat();
        });
    });
  }

  /** Looks for due work now (after a lease was created or changed in this process). */
  wake(): void {
    if (!this.started) return;
    this.timer?.cancel();
    this.timer = null;
    this.runDue().catch((err: unknown) => this.deps.logger.error({ err }, 'lease engine run failed'));
  }

  /**
   * Claims and runs every task due now; resolves to the number of task runs. Calls while a run is in progress
   * share one run queued behind it, so runs never overlap within a process.
   */
  runDue(): Promise<number> {
    if (this.queued) return this.queued;
    if (!this.active) return (this.active = this.track(this.runOnce()));
    const queued = this.active
      .catch(() => undefined)
      .then(() => {
        this.queued = null;
        return (this.active = this.track(this.runOnce()));
      });
    this.queued = queued;
    return queued;
  }

  private track(run: Promise<number>): Promise<number> {
    const tracked: Promise<number> = run.finally(() => {
      if (this.active === tracked) this.active = null;
    });
    return tracked;
  }

  /**
   * Runs due work until none is left, as a pipeline rather than in batches: each queue (TaskLane) keeps up to its
   * concurrency of tasks running and claims more as they finish, so one slow node never holds up the others
   * (before: batches of 20, each waiting for its slowest task). A task that finishes may have made work due in
   * either queue (an end whose lessee is cleared goes on in the release queue), so both look again.
   */
  private async runOnce(): Promise<number> {
    let total = 0;
    let claims = 0;
    const running: Record<TaskLane, Set<Promise<void>>> = { mark: new Set(), release: new Set() };
    const worth: Record<TaskLane, boolean> = { mark: true, release: true };
    try {
      for (;;) {
        for (const lane of LANES) {
          const limit = this.inFlight[lane];
          const set = running[lane];
          // Claim when at least half the lane is free (one query per few tasks, not per task).
          if (!worth[lane] || set.size > limit / 2 || claims >= MAX_CLAIMS_PER_RUN) continue;
          claims++;
          const claimed = await this.deps.tasks.claimDueTasks(this.workerId, this.deps.clock.now(), limit - set.size, this.claimMs, lane);
          worth[lane] = claimed.length > 0;
          total += claimed.length;
          if (claimed.length > 0) this.deps.logger.debug({ tasks: claimed.length, lane }, 'claimed due tasks');
          // Tasks of one allocation run in order; different allocations (nodes) in parallel.
          const byAllocation = new Map<string, LeaseTask[]>();
          for (const task of claimed) byAllocation.set(task.allocation_id, [...(byAllocation.get(task.allocation_id) ?? []), task]);
          for (const tasks of byAllocation.values()) {
            const run: Promise<void> = (async () => {
              for (const task of tasks) await this.runTask(task, lane);
            })().finally(() => {
              set.delete(run);
              worth.mark = worth.release = true;
            });
            set.add(run);
          }
        }
        const all = [...running.mark, ...running.release];
        if (all.length === 0) {
          if (claims >= MAX_CLAIMS_PER_RUN || !LANES.some((lane) => worth[lane])) break;
          continue;
        }
        await Promise.race(all);
      }
      return total;
    } finally {
      if (this.started) await this.arm();
    }
  }

  /** One timer: the next due task, or the safety re-check, whichever comes first. */
  private async arm(): Promise<void> {
    let delay = this.pollMs;
    try {
      const next = await this.deps.tasks.nextDueAt();
      this.storeFailures = 0;
      if (next) {
        const until = next.getTime() - this.deps.clock.now().getTime();
        // Due but not claimed by this run: another replica holds it (or it waits for one that does).
        delay = Math.min(this.pollMs, until <= 0 ? IDLE_FLOOR_MS : until);
      }
    } catch (err) {
      this.storeFailures++;
      delay = Math.min(this.pollMs, STORE_RETRY_MS * 2 ** Math.min(this.storeFailures - 1, 10));
      this.deps.logger.warn(
        { error: err instanceof Error ? err.message : String(err), retry_in_ms: delay },
        'lease engine: cannot read the next due time; checking again later',
      );
    }
    if (!this.started) return;
    this.timer?.cancel();
    this.timer = this.deps.clock.setTimer(delay, () => {
      this.timer = null;
      this.runDue().catch((err: unknown) => this.deps.logger.error({ err }, 'lease engine run failed'));
    });
  }

  /** Runs one task and records how it went; never throws (a failure is a retry). */
  private async runTask(task: LeaseTask, lane: TaskLane): Promise<void> {
    // Taken as the task starts (in the order claimed): its hardware calls go before those of tasks started later.
    const ticket = nextTicket();
    // Tasks taken over by another replica never complete here: forget them all now and then.
    if (this.memory.size > MAX_REMEMBERED_TASKS) this.memory.clear();
    const memory = this.memory.get(task.id) ?? { failures: 0, powerOffRequests: 0 };
    this.memory.set(task.id, memory);
    const { tasks, logger } = this.deps;
    const log = logger.child({ task_id: task.id, kind: task.kind, lease_id: task.lease_id, allocation_id: task.allocation_id });
    let run: TaskRun | null = null;
    // Lag: how long after its due time the task got to run (a retry's due time is its backoff's end).
    const lagSeconds = Math.max(0, this.deps.clock.now().getTime() - task.due_at.getTime()) / 1000;
    let reported: TaskRunOutcome = 'failed';
    try {
      const context = task.allocation_id ? await tasks.getAllocationContext(task.allocation_id) : null;
      let outcome: TaskOutcome = DONE;
      if (!context) log.warn('task without an allocation (deleted?): completed without action');
      else {
        run = new TaskRun({ ...this.deps, driver: this.laneDriver[lane](ticket) }, task, context, memory, { taskId: task.id, worker: this.workerId });
        log.debug({ node_id: context.allocation.node_id, attempts: task.attempts }, 'running task');
        // A sub-lease's end hands the node back to the lessee that offered it instead of cleaning it.
        if (task.kind === 'start') outcome = await runStartTask(run);
        else outcome = run.allocation.parent_allocation_id === null ? await runEndTask(run) : await runSubleaseEndTask(run);
      }
      memory.failures = 0;
      if (outcome.kind === 'done') {
        await tasks.completeTask(task.id, this.deps.clock.now(), this.workerId);
        this.memory.delete(task.id);
      } else {
        await tasks.retryTask(task.id, outcome.at, null, this.deps.clock.now(), this.workerId);
      }
      reported = outcome.kind;
    } catch (err) {
      if (err instanceof ClaimLostError) reported = 'claim_lost';
      await this.failed(task, run, memory, err, log);
    } finally {
      this.deps.metrics?.taskRun({ kind: task.kind, outcome: reported, lagSeconds });
    }
  }

  private async failed(task: LeaseTask, run: TaskRun | null, memory: TaskMemory, err: unknown, log: Logger): Promise<void> {
    if (err instanceof ClaimLostError) {
      // Another worker took the task over while this one stalled: it goes on from the recorded step.
      log.warn({ node_id: run?.nodeId }, 'claim taken over by another worker; leaving the task to it');
      this.memory.delete(task.id);
      return;
    }
    memory.failures++;
    const now = this.deps.clock.now();
    const delay = backoffMs(memory.failures, this.retry);
    const message = err instanceof Error ? err.message : String(err);
    const expected = isLeaseholdError(err) && (err.retryable || err.code === ErrorCode.InvalidState);
    const fields = { node_id: run?.nodeId, failures: memory.failures, retry_in_ms: delay, error: message };
    if (expected) log.warn(fields, 'task failed; will retry');
    else log.error({ ...fields, err }, 'task failed unexpectedly; will retry');
    try {
      // A worker whose claim expired (it hung) may fail long after another finished the task: no stale report.
      const current = run ? await this.deps.tasks.getAllocationContext(run.allocation.id) : null;
      const settled = current !== null && FINAL_ALLOCATION_STATES.includes(current.allocation.state);
      if (run && !settled && isReportedFailure(memory.failures)) {
        await run.update({ last_error: message }, [
          {
            type: `allocation.${task.kind}_error`,
            outcome: 'error',
            message: `${task.kind === 'start' ? 'handing the node over' : 'releasing the node'} failed (attempt ${memory.failures}): ${message}`,
            details: {
              error: message,
              code: isLeaseholdError(err) ? err.code : ErrorCode.Internal,
              failures: memory.failures,
              step: run.allocation.step,
              retry_in_ms: delay,
            },
          },
        ]);
      }
      await this.deps.tasks.retryTask(task.id, new Date(now.getTime() + delay), message, now, this.workerId);
    } catch (recordErr) {
      // The store is unreachable too: the claim expires and the task is picked up again then.
      log.warn({ err: recordErr }, 'could not record the failure; the task is retried when its claim expires');
    }
  }
}
