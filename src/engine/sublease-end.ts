import { NotFoundError } from '../domain/errors.js';
import { AllocationState, ReleaseStep } from '../domain/leasing.js';
import type { DriverNode } from '../drivers/hardware-driver.js';
import { clearLeaseMark, leaseMarkOf, setLeaseMark } from '../drivers/lessee-mark.js';
import { DONE } from './task-run.js';
import type { TaskOutcome, TaskRun } from './task-run.js';

/**
 * The `end` task of a sub-allocation (domain/subleasing.ts): the node goes back to the lessee that offered it, not
 * to the pool. Access already ended at the end instant (the API decides it from the times); this mirrors it in
 * Ironic:
 *
 * 1. the sub-lessee's networks are taken off the node (the owner's and the parent lessee's stay);
 * 2. if the parent allocation goes on, Ironic's `lessee` and mark are set back to the parent lease; if it ended at
 *    the same instant (or earlier: the sub-lease was cut with it), they are cleared, and the parent's own end task
 *    wipes the node as at any end — no cleaning here, the node is not going to a stranger;
 * 3. the allocation is `released` (`allocation.handed_back`).
 *
 * Each step looks at the node first, so a crash or a second run does nothing twice; a mark that is neither the
 * sub-lease's nor missing (the parent's release got there first and cleared it, or the parent was handed it back)
 * is left alone.
 */
export async function runSubleaseEndTask(run: TaskRun): Promise<TaskOutcome> {
  const { allocation, lease, deps } = run;
  const log = deps.logger.child(run.logFields);
  if (allocation.state === AllocationState.Released || allocation.state === AllocationState.Quarantined || allocation.state === AllocationState.Cancelled) {
    return DONE;
  }
  const releasing = allocation.state === AllocationState.Releasing;
  if (!releasing && run.now().getTime() < allocation.end.getTime()) return { kind: 'later', at: allocation.end };
  if (!releasing) {
    await run.update({ state: AllocationState.Releasing, step: ReleaseStep.ClearLessee }, [
      { type: 'allocation.releasing', message: `sub-lease over: handing node ${run.nodeId} back` },
    ]);
  }
  const parent = await deps.tasks.parentHold(allocation.id);
  const now = run.now().getTime();
  const parentGoesOn = parent !== null && parent.in_lease && parent.start.getTime() <= now && now < parent.end.getTime();
  let node: DriverNode;
  try {
    node = await deps.driver.getNode(run.nodeId);
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    await run.update({ state: AllocationState.Released, step: null, last_error: err.message }, [
      { type: 'allocation.handed_back', outcome: 'error', message: `node ${run.nodeId} no longer exists in Ironic` },
    ]);
    return DONE;
  }
  if (deps.networks) {
    const keep = [...(await deps.networks.ownerProjects(node)), ...(parentGoesOn ? [parent.project_id] : [])];
    await deps.networks.clearNode(run.nodeId, keep, { actor: 'engine', lease_id: lease.id, reason: 'sub-lease over' });
  }
  const mark = leaseMarkOf(node);
  const ours = mark === lease.id || (mark === null && node.lessee === lease.project_id);
  if (ours && parentGoesOn) {
    await run.recordNode(await setLeaseMark(deps.driver, node, { id: parent.lease_id, project_id: parent.project_id }));
    await run.update({}, [{ type: 'node.lessee_set', message: `lessee set back to project ${parent.project_id} (lease ${parent.lease_id})` }]);
  } else if (ours) {
    await run.recordNode(await clearLeaseMark(deps.driver, node));
    await run.update({}, [{ type: 'node.lessee_cleared', message: `lessee ${node.lessee ?? '(none)'} cleared; the parent lease's end cleans the node` }]);
  }
  const to = parentGoesOn ? `handed back to project ${parent.project_id}` : 'left to the parent lease\'s cleaning';
  await run.update({ state: AllocationState.Released, step: null }, [
    {
      type: 'allocation.handed_back',
      message: `sub-lease over: node ${run.nodeId} ${to}`,
      details: { parent_lease_id: parent?.lease_id ?? null, to: parentGoesOn ? parent.project_id : null },
    },
  ]);
  log.info({ parent_goes_on: parentGoesOn }, 'sub-lease over: node handed back');
  return DONE;
}
