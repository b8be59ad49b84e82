import { InvalidStateError, NodeNotReadyError, NotFoundError } from '../domain/errors.js';
import { AllocationState, ReleaseStep } from '../domain/leasing.js';
import { PowerState, PowerTarget, ProvisionState as S, ProvisionVerb } from '../drivers/hardware-driver.js';
import type { DriverNode } from '../drivers/hardware-driver.js';
import { carriesMark, clearLeaseMark, leaseMarkOf } from '../drivers/lessee-mark.js';
import { parentGoesOn } from '../domain/subleasing.js';
import { NEVER_HANDED_OVER } from './start-task.js';
import { DONE } from './task-run.js';
import type { Logger } from '../logger.js';
import type { EngineEvent, TaskOutcome, TaskRun } from './task-run.js';

/** What one release step decided, after looking at the node (and maybe acting on it). */
type StepResult =
  /** This step is done: go on with `step`. */
  | { readonly kind: 'next'; readonly step: ReleaseStep }
  /** The node is carrying out what was asked: look again in a moment (the task is not held meanwhile). */
  | { readonly kind: 'wait'; readonly why: string }
  /** Re-read the node and run this step again (an action that Ironic completes at once, e.g. manage). */
  | { readonly kind: 'again' }
  | { readonly kind: 'released' }
  | { readonly kind: 'quarantine'; readonly reason: string };

/** States from which Ironic undeploys (tear down, then automated cleaning). */
const UNDEPLOYABLE: readonly string[] = [S.Active, S.DeployFailed, S.DeployWait, 'rescue', 'rescue failed', 'rescue wait'];
/** States meaning cleaning is under way (or the tear down before it). */
const CLEANING: readonly string[] = [S.Cleaning, S.CleanWait, S.Deleting];
/** States meaning cleaning failed: the node is quarantined. */
const FAILED: readonly string[] = [S.CleanFailed, S.Error];
/** Transitions owned by someone else (the lessee's last deploy, a verification): wait for them to settle. */
const TRANSIENT: readonly string[] = [S.Deploying, S.Verifying, 'rescuing', 'inspecting', 'adopting', 'unrescuing'];

/** How often one run re-reads a node after an action Ironic completes within the request, before waiting. */
const MAX_AGAIN = 3;
/** Steps one run may go through before it lets other work proceed (a node bouncing between states). */
const MAX_STEPS_PER_RUN = 16;
/** Power-off requests that did not take before cleaning goes ahead anyway (it power-cycles the node itself). */
const MAX_POWER_OFF_REQUESTS = 3;
/**
 * The first look at a node carrying out an action comes this soon, each next one twice as late, up to settleMs:
 * the simulated hardware powers off in 5 ms and Ironic's fake power in ≈ 45 ms, which a fixed 1 s settle turned
 * into a second per step (1,000 ends took 14.6 s to release on PostgreSQL).
 */
const FIRST_LOOK_MS = 50;

/**
 * The `end` task: takes the node back and wipes it. Access already ended at the end instant (the API decides it
 * from the lease's times); this mirrors it in Ironic and cleans. The steps run in order, each recorded on the
 * allocation before it starts, so a crash resumes at the recorded one; each looks at the node first, so running
 * one again does nothing twice:
 *
 * 1. clear_lessee: `lessee` and `extra.leasehold_lease` cleared;
 * 2. detach_networks: every network not the owner's taken off the node (VIFs unplugged, trunks and the ports
 *    Leasehold created deleted: engine/network-teardown.ts), before anything else touches the node;
 * 3. console_off: the serial console disabled (if enabled);
 * 4. power_off: powered off (if on), waiting for it;
 * 5. clean: `active` (deployed) → undeploy, `available` → manage then provide (automated cleaning), already
 *    cleaning → nothing;
 * 6. wait_available: `available` → the allocation is `released`; `clean failed` or `error` → the node is
 *    quarantined with Ironic's last_error and the allocation is `quarantined`.
 *
 * Waiting never holds the task: the run ends with "look again in settleMs" and other work proceeds. A lease whose
 * end moved later (extended) before the release started is simply rescheduled to its new end.
 */
export async function runEndTask(run: TaskRun): Promise<TaskOutcome> {
  const { allocation, deps } = run;
  const log = deps.logger.child(run.logFields);
  if (allocation.state === AllocationState.Released || allocation.state === AllocationState.Quarantined || allocation.state === AllocationState.Cancelled) {
    log.info({ allocation_state: allocation.state }, 'end: nothing left to release');
    return DONE;
  }
  const releasing = allocation.state === AllocationState.Releasing;
  if (!releasing && run.now().getTime() < allocation.end.getTime()) {
    log.info({ end: allocation.end.toISOString() }, 'end: the lease now ends later; rescheduled');
    return { kind: 'later', at: allocation.end };
  }

  let step: ReleaseStep = (releasing && allocation.step) || ReleaseStep.ClearLessee;
  // Progress and events are written once per run (TaskRun.defer), when it waits, yields or ends.
  run.defer();
  if (!releasing) {
    run.memory.powerOffRequests = 0;
    await run.update({ state: AllocationState.Releasing, step, last_error: missedStart(run) }, [
      { type: 'allocation.releasing', message: `lease over: taking node ${run.nodeId} back and cleaning it` },
    ]);
    log.info('end: releasing the node');
  }
  try {
    return await releaseSteps(run, step, log);
  } finally {
    // Also when a step failed: what was done before it is recorded (the engine retries from there).
    await run.flush();
  }
}

async function releaseSteps(run: TaskRun, from: ReleaseStep, log: Logger): Promise<TaskOutcome> {
  const { deps } = run;
  let step = from;
  let watched = 0;
  if (step === ReleaseStep.ClearLessee && (await clearRecordedMark(run))) {
    await run.update({ step: ReleaseStep.DetachNetworks });
    // As below: the rest of the release goes on in the engine's release queue.
    return { kind: 'later', at: run.now() };
  }
  for (let again = 0, steps = 0; ; steps++) {
    if (steps >= MAX_STEPS_PER_RUN) return waitOutcome(run, step, 'many steps in one run');
    let node: DriverNode;
    try {
      node = await deps.driver.getNode(run.nodeId);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      return quarantine(run, step, null, `node ${run.nodeId} no longer exists in Ironic: it could not be cleaned`);
    }
    log.debug({ step, provision_state: node.provision_state, power_state: node.power_state }, 'release step');
    const result = await runStepOnce(run, step, node);
    switch (result.kind) {
      case 'next':
        step = result.step;
        again = 0;
        await run.update({ step });
        // Access in Ironic is gone: the rest (power, cleaning) goes on in the engine's release queue, so every
        // due lessee is cleared before any node's cleaning holds a worker (TaskLane).
        if (from === ReleaseStep.ClearLessee && steps === 0) return { kind: 'later', at: run.now() };
        continue;
      case 'again':
        if (++again <= MAX_AGAIN) continue;
        return waitOutcome(run, step, 'the node has not settled yet');
      case 'wait': {
        // Watch the node for a moment before handing the task back: most actions are over within it, and each
        // hand-back costs a claim, a re-read of the allocation and a re-schedule (issue 15).
        const delay = nextLook(run, step);
        if (watched + delay > deps.watchMs) {
          await run.recordNode(node);
          return waitOutcome(run, step, result.why, delay);
        }
        // What the actions so far did goes to the audit log before the wait (a crash during it loses nothing).
        await run.flush(false);
        await deps.clock.sleep(delay);
        watched += delay;
        continue;
      }
      case 'released':
        await run.recordNode(node);
        await run.update({ state: AllocationState.Released, step: null, last_error: missedStart(run) }, [
          { type: 'allocation.released', message: `node ${run.nodeId} is clean and back in the pool` },
        ]);
        log.info('allocation released: node cleaned and available');
        // From the allocation's end (when its end task fell due; a node that left early: the instant it left)
        // to clean and available: read from the store's times, so a release resumed by another replica counts whole.
        deps.metrics?.cleaned(Math.max(0, run.now().getTime() - run.allocation.end.getTime()) / 1000);
        return DONE;
      case 'quarantine':
        return quarantine(run, step, node, result.reason);
    }
  }
}

/** Runs a step; an InvalidStateError from the driver means the node moved on meanwhile: look again. */
async function runStepOnce(run: TaskRun, step: ReleaseStep, node: DriverNode): Promise<StepResult> {
  try {
    return await STEPS[step](run, node);
  } catch (err) {
    if (!(err instanceof InvalidStateError)) throw err;
    const now = await run.deps.driver.getNode(run.nodeId);
    if (now.provision_state === node.provision_state && now.power_state === node.power_state && now.reservation === null) throw err;
    run.deps.logger.child(run.logFields).debug({ step, error: err.message }, 'release step: the node changed meanwhile; deciding again');
    return { kind: 'again' };
  }
}

/** How long until the next look at a node carrying out the action of `step`: 50 ms, then twice as long, up to settleMs. */
function nextLook(run: TaskRun, step: ReleaseStep): number {
  const { memory } = run;
  if (memory.waitingStep !== step) {
    memory.waitingStep = step;
    memory.waits = 0;
  }
  const waits = memory.waits ?? 0;
  memory.waits = waits + 1;
  return Math.min(run.deps.settleMs, FIRST_LOOK_MS * 2 ** waits);
}

function waitOutcome(run: TaskRun, step: ReleaseStep, why: string, delay = nextLook(run, step)): TaskOutcome {
  run.deps.logger.child(run.logFields).debug({ step, why, retry_in_ms: delay }, 'release step waiting');
  return { kind: 'later', at: new Date(run.now().getTime() + delay) };
}

/** Before acting on a node: another operation holding its lock means waiting (Ironic would answer 409). */
function busy(node: DriverNode): StepResult | null {
  return node.reservation !== null ? { kind: 'wait', why: `node locked by ${node.reservation}` } : null;
}

/** An action was asked of the node: its event, written with the run's progress (the node is recorded as the run leaves it). */
async function acted(run: TaskRun, event: EngineEvent): Promise<void> {
  await run.update({}, [event]);
}

/**
 * clear_lessee without reading the node first, when the store's record of it (the hand-over recorded the node as
 * Ironic answered its PATCH; syncs record it again) shows this very lease's mark: the PATCH is built from the
 * record. A record gone stale costs no wrong write: Ironic refuses to remove what is no longer there (400), and the
 * driver then reads the node and builds the change again. No other lease can have marked the node meanwhile: its
 * start waits until this allocation is finished (engine-claim-due-tasks.ts). Anything else the record shows (no
 * mark, a sub-lease's, another lease's) goes the way of a read (the step below). Issue 15: 200 ends cleared their
 * lessees in 1.35 × the time of the same PATCHes sent alone; the read before each was the difference.
 */
async function clearRecordedMark(run: TaskRun): Promise<boolean> {
  const recorded = run.context.recorded;
  // Only a release's first run: one that failed or was cut off after its PATCH (the record not yet written) reads
  // the node, so it neither clears nor reports twice.
  if (run.allocation.state === AllocationState.Releasing) return false;
  if (!recorded || leaseMarkOf(recorded) !== run.lease.id) return false;
  let node: DriverNode;
  try {
    node = await clearLeaseMark(run.deps.driver, recorded);
  } catch (err) {
    if (err instanceof NotFoundError) return false; // the read path quarantines a node gone from Ironic
    throw err;
  }
  await run.recordNode(node);
  await run.update({}, [{ type: 'node.lessee_cleared', message: recorded.lessee ? `lessee ${recorded.lessee} cleared` : 'lease mark cleared' }]);
  return true;
}

const STEPS: Record<ReleaseStep, (run: TaskRun, node: DriverNode) => Promise<StepResult>> = {
  async [ReleaseStep.ClearLessee](run, node) {
    const marker = leaseMarkOf(node);
    // A sub-lease's mark is this lease's to clear: the sub-lease ended with it (its hand-back may not have run yet).
    if (marker !== null && marker !== run.lease.id && !(await run.deps.tasks.subleaseIdsOf(run.allocation.id)).includes(marker)) {
      // Another lease's mark: never undo someone else's hand-over (the next start waits for this release).
      run.deps.logger.child(run.logFields).warn({ marker }, 'clear_lessee: the node carries another lease; lessee left alone');
      return { kind: 'next', step: ReleaseStep.DetachNetworks };
    }
    if (carriesMark(node)) {
      await run.recordNode(await clearLeaseMark(run.deps.driver, node));
      await run.update({}, [{ type: 'node.lessee_cleared', message: node.lessee ? `lessee ${node.lessee} cleared` : 'lease mark cleared' }]);
    }
    return { kind: 'next', step: ReleaseStep.DetachNetworks };
  },

  async [ReleaseStep.DetachNetworks](run, node) {
    const teardown = run.deps.networks;
    if (teardown) {
      // The step is a row before Neutron or Ironic is asked anything (the teardown's calls are not the run's own
      // driver actions, which flush a deferred step by themselves).
      await run.flush(false);
      // Only the owner's networks stay: the next lessee must find nothing of this one's (nor of anyone else's). At
      // a sub-lease's end the node goes back to the lessee that lent it: its networks stay too.
      const keep = [...(await teardown.ownerProjects(node))];
      if (run.allocation.parent_allocation_id !== null) {
        const parent = await run.deps.tasks.parentHold(run.allocation.id);
        if (parentGoesOn(parent, run.now())) keep.push(parent.project_id);
      }
      const removed = await teardown.clearNode(run.nodeId, keep, { actor: 'engine', lease_id: run.lease.id, reason: 'lease over' });
      if (removed.attachments + removed.vifs > 0) {
        run.deps.logger.child(run.logFields).info(removed, 'detach_networks: the lease\'s networks taken off the node');
      }
    }
    return { kind: 'next', step: ReleaseStep.ConsoleOff };
  },

  async [ReleaseStep.ConsoleOff](run, node) {
    if (!node.console_enabled) return { kind: 'next', step: ReleaseStep.PowerOff };
    const wait = busy(node);
    if (wait) return wait;
    await run.deps.driver.setConsoleEnabled(run.nodeId, false);
    await acted(run, { type: 'node.console_disabled', message: 'serial console disabled' });
    return { kind: 'wait', why: 'console being disabled' };
  },

  async [ReleaseStep.PowerOff](run, node) {
    if (node.power_state !== PowerState.On) return { kind: 'next', step: ReleaseStep.Clean };
    if (node.target_power_state === PowerState.Off) return { kind: 'wait', why: 'powering off' };
    const wait = busy(node);
    if (wait) return wait;
    if (run.memory.powerOffRequests >= MAX_POWER_OFF_REQUESTS) {
      const error = node.last_error ?? 'the node stayed powered on';
      await run.update({ last_error: error }, [
        {
          type: 'node.power_off_failed',
          outcome: 'error',
          message: `could not power the node off (${error}); cleaning anyway`,
          details: { last_error: node.last_error },
        },
      ]);
      return { kind: 'next', step: ReleaseStep.Clean };
    }
    run.memory.powerOffRequests++;
    await run.deps.driver.setPowerState(run.nodeId, PowerTarget.Off);
    await acted(run, { type: 'node.power_off', message: 'power off requested' });
    return { kind: 'wait', why: 'powering off' };
  },

  async [ReleaseStep.Clean](run, node) {
    const state = node.provision_state;
    if (CLEANING.includes(state) || FAILED.includes(state)) return { kind: 'next', step: ReleaseStep.WaitAvailable };
    if (TRANSIENT.includes(state) || node.target_provision_state !== null) return { kind: 'wait', why: `node is ${state}` };
    const wait = busy(node);
    if (wait) return wait;
    const { driver } = run.deps;
    // Ironic refuses provide and undeploy in maintenance (manage is allowed).
    if (node.maintenance && (state === S.Manageable || UNDEPLOYABLE.includes(state))) {
      throw new NodeNotReadyError(
        `node ${run.nodeId} is in maintenance (${node.maintenance_reason ?? 'no reason given'}); cleaning waits until it is cleared`,
      );
    }
    if (state === S.Available) {
      await driver.setProvisionState(run.nodeId, ProvisionVerb.Manage);
      await acted(run, { type: 'node.manage', message: 'moved to manageable for cleaning' });
      return { kind: 'again' };
    }
    if (state === S.Manageable) {
      await driver.setProvisionState(run.nodeId, ProvisionVerb.Provide);
      await acted(run, { type: 'node.cleaning_started', message: 'automated cleaning started (provide)' });
      return { kind: 'next', step: ReleaseStep.WaitAvailable };
    }
    if (UNDEPLOYABLE.includes(state)) {
      await driver.setProvisionState(run.nodeId, ProvisionVerb.Undeploy);
      await acted(run, { type: 'node.undeploy', message: `undeploy from "${state}" started (tear down, then automated cleaning)` });
      return { kind: 'next', step: ReleaseStep.WaitAvailable };
    }
    return { kind: 'quarantine', reason: `node is in provision state "${state}", from which Leasehold cannot clean it` };
  },

  async [ReleaseStep.WaitAvailable](_run, node) {
    const state = node.provision_state;
    if (FAILED.includes(state)) return { kind: 'quarantine', reason: node.last_error ?? `cleaning ended in "${state}"` };
    if (state === S.Available && node.target_provision_state === null) return { kind: 'released' };
    if (CLEANING.includes(state) || node.target_provision_state !== null || TRANSIENT.includes(state)) {
      return { kind: 'wait', why: `node is ${state}` };
    }
    // Cleaning never started or was undone (e.g. still manageable): decide again from the node's state.
    return { kind: 'next', step: ReleaseStep.Clean };
  },
};

/** Cleaning failed (or cannot be done): the node takes no new lease until its owner or the operator clears it. */
async function quarantine(run: TaskRun, step: ReleaseStep, node: DriverNode | null, reason: string): Promise<TaskOutcome> {
  const { deps } = run;
  const now = run.now();
  await deps.tasks.quarantineNode(run.nodeId, reason, now);
  if (node) await run.refreshNode();
  const details = { last_error: node?.last_error ?? reason, provision_state: node?.provision_state ?? null, step };
  await run.update({ state: AllocationState.Quarantined, last_error: reason }, [
    { type: 'node.quarantined', outcome: 'error', message: `node ${run.nodeId} quarantined: ${reason}`, details },
    {
      type: 'lease.node_quarantined',
      outcome: 'error',
      message: `cleaning node ${run.nodeId} after this lease failed; the node is quarantined`,
      details: { ...details, node_id: run.nodeId },
    },
  ]);
  deps.logger.child(run.logFields).info({ reason, provision_state: node?.provision_state ?? null }, 'allocation quarantined: cleaning failed');
  return DONE;
}

/** A node never handed over keeps the reason why (start-task.ts) on its allocation through the release. */
function missedStart(run: TaskRun): string | null {
  const error = run.allocation.last_error;
  return error?.startsWith(NEVER_HANDED_OVER) ? error : null;
}
