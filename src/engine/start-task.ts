import { InvalidRequestError, NodeNotReadyError, NotFoundError } from '../domain/errors.js';
import { AllocationState, LeaseState } from '../domain/leasing.js';
import { ProvisionState } from '../drivers/hardware-driver.js';
import type { DriverNode } from '../drivers/hardware-driver.js';
import { isMarkedFor, setLeaseMark } from '../drivers/lessee-mark.js';
import { DONE } from './task-run.js';
import type { TaskOutcome, TaskRun } from './task-run.js';

/** How the reason of a missed start begins: the release keeps such a `last_error` on the allocation. */
export const NEVER_HANDED_OVER = 'never handed over: ';

/** Provision states of a node that is being wiped or failed to be: never handed to a lessee like that. */
const NOT_CLEAN: readonly string[] = [
  ProvisionState.Cleaning,
  ProvisionState.CleanWait,
  ProvisionState.CleanFailed,
  ProvisionState.Deleting,
  ProvisionState.Error,
];

const FINISHED: readonly string[] = [
  AllocationState.Releasing,
  AllocationState.Released,
  AllocationState.Quarantined,
  AllocationState.Cancelled,
];

/**
 * The `start` task: hands the node to the lessee by setting Ironic's `lessee` (the lease's project) and
 * `extra.leasehold_lease` (drivers/lessee-mark.ts), so tools talking to Ironic see who holds it. Access itself is decided by the API from
 * the lease's times, not from this. Idempotent: a node that already carries the lessee is not written again, and
 * an allocation already `active` completes without a second `allocation.started` event.
 *
 * A lease cancelled before the task runs completes it without touching the node. A lease whose whole window
 * passed before its node could be handed over records why (`allocation.start_missed`, and `last_error` on the
 * allocation) and leaves the node to its end task, which cleans it; one caught mid-hand-over likewise. A node that is still being cleaned (or failed cleaning) blocks the
 * hand-over: retried with backoff. A node that no longer exists in Ironic is a permanent failure: the allocation
 * is dropped (`cancelled`, with the error), and a lease left without any allocation is `failed` (the store
 * derives it).
 */
export async function runStartTask(run: TaskRun): Promise<TaskOutcome> {
  const { allocation, lease, deps } = run;
  const log = deps.logger.child(run.logFields);
  if (lease.state === LeaseState.Cancelled || lease.cancelled_at !== null || FINISHED.includes(allocation.state)) {
    log.info({ lease_state: lease.state, allocation_state: allocation.state }, 'start skipped: the allocation is no longer waiting to start');
    return DONE;
  }
  if (run.now().getTime() >= allocation.end.getTime()) {
    if (allocation.state === AllocationState.Reserved) return startMissed(run);
    log.info({ end: allocation.end.toISOString() }, 'start skipped: the lease is already over; its end task releases the node');
    return DONE;
  }

  let node: DriverNode;
  try {
    node = await deps.driver.getNode(run.nodeId);
  } catch (err) {
    if (err instanceof NotFoundError) return startFailed(run, err);
    throw err;
  }
  if (NOT_CLEAN.includes(node.provision_state)) {
    throw new NodeNotReadyError(
      `node ${run.nodeId} is in provision state "${node.provision_state}"; it is handed over once it is clean`,
    );
  }

  const mirrored = isMarkedFor(node, lease);
  if (allocation.state === AllocationState.Active && mirrored) {
    log.info('start: the node is already handed over');
    return DONE;
  }
  // `starting` is written while Ironic takes the mark, not before (one store write less on the way to the lessee;
  // measured against a real Ironic: a 4-node hand-over waited 10–30 ms for it). A crash between the two is the same
  // as one after the mark: the retry finds the node marked and completes.
  const starting = allocation.state === AllocationState.Reserved ? run.update({ state: AllocationState.Starting }) : Promise.resolve();
  if (allocation.state === AllocationState.Reserved) log.debug('start: handing the node over');
  let handed = node;
  if (!mirrored) {
    // Settled in order: the `starting` write is done before any later write of this allocation is asked for.
    const [written, marked] = await Promise.allSettled([starting, setLeaseMark(deps.driver, node, lease)]);
    if (written.status === 'rejected') throw written.reason;
    if (marked.status === 'rejected') {
      const err: unknown = marked.reason;
      if (err instanceof NotFoundError || err instanceof InvalidRequestError) return startFailed(run, err);
      throw err;
    }
    handed = marked.value;
    log.debug({ lessee: lease.project_id }, 'start: lessee set in the driver');
  } else await starting;
  // The node as the driver answered: recorded without asking it again, beside the allocation's write.
  const recorded = run.recordNode(handed);
  if (allocation.state === AllocationState.Active) {
    // The mirror had drifted (someone changed the node in Ironic); repaired above.
    await settleAll(recorded, run.update({}, [{ type: 'node.lessee_set', node_id: run.nodeId, message: `lessee set again to project ${lease.project_id}` }]));
    log.info('start: lessee restored on an active allocation');
    return DONE;
  }
  await settleAll(
    recorded,
    run.update({ state: AllocationState.Active, step: null, last_error: null }, [
      {
        type: 'allocation.started',
        message: `node ${run.nodeId} handed to project ${lease.project_id}`,
        details: { lessee: lease.project_id, allocation_id: allocation.id },
      },
    ]),
  );
  log.info('allocation started: node handed to the lessee');
  return DONE;
}

/** Waits for every write, then fails with the first failure (no write is left running behind a failure). */
async function settleAll(...writes: readonly Promise<void>[]): Promise<void> {
  const settled = await Promise.allSettled(writes);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * The whole window passed before the node could be handed over (its previous lease's cleaning overran it, it was
 * quarantined, or no worker ran until after the end): never skipped silently (issue 11). The reason is kept on
 * the allocation (`last_error`, through its release) and in an `allocation.start_missed` event. The node is still
 * cleaned by the end task: the API grants access from the lease's times once the previous lease let go of the
 * node, so the lessee may have used it without the engine, and wipe-before-reuse must not rest on a guess.
 */
async function startMissed(run: TaskRun): Promise<TaskOutcome> {
  const end = run.allocation.end.toISOString();
  const obstacle = run.task.last_error
    ? `; last obstacle: ${run.task.last_error}`
    : ': the node was still held by its previous lease (cleaning) or quarantined, or no worker was running';
  const reason = `${NEVER_HANDED_OVER}the lease ended at ${end} before node ${run.nodeId} could be handed over${obstacle}`;
  await run.update({ last_error: reason }, [
    {
      type: 'allocation.start_missed',
      outcome: 'error',
      message: reason,
      details: { allocation_id: run.allocation.id, end, due_at: run.task.due_at.toISOString(), error: run.task.last_error },
    },
  ]);
  run.deps.logger.child(run.logFields).warn({ end }, 'start missed: the lease ended before the node could be handed over');
  return DONE;
}

async function startFailed(run: TaskRun, err: Error): Promise<TaskOutcome> {
  await run.update({ state: AllocationState.Cancelled, last_error: err.message }, [
    {
      type: 'allocation.start_failed',
      outcome: 'error',
      message: `node ${run.nodeId} could not be handed over: ${err.message}`,
      details: { allocation_id: run.allocation.id, error: err.message },
    },
  ]);
  run.deps.logger.child(run.logFields).warn({ error: err.message }, 'start failed permanently: allocation dropped');
  return DONE;
}
