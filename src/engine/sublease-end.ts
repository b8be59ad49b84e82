import { AllocationState } from '../domain/leasing.js';
import { parentGoesOn } from '../domain/subleasing.js';
import { clearLeaseMark, leaseMarkOf, setLeaseMark } from '../drivers/lessee-mark.js';
import { runEndTask } from './release-steps.js';
import { DONE } from './task-run.js';
import type { TaskOutcome, TaskRun } from './task-run.js';

/**
 * The `end` task of a sub-allocation (domain/subleasing.ts). The node is wiped as at any end — the lessee that lent
 * it must find nothing of the sub-lessee's, as any next lessee (ESI cleans at a sub-lease's end too) — by the
 * ordinary release (release-steps.ts: lessee cleared, the sub-lessee's networks off but the parent lessee's kept,
 * console and power off, cleaned, `released`); then, if the parent lease goes on, Ironic's `lessee` and mark are set
 * back to it (`allocation.handed_back`). The parent lessee's access waits for the same `released` (the access
 * queries: a sub-lease that began and is not finished holds its parent back), exactly as a next lessee's does.
 *
 * A sub-lease cut with its parent only lets go of the node (`letGo`): the parent's end wipes it, once.
 *
 * A crash between the release and the hand-back re-runs the task: the release has nothing left to do, and the
 * hand-back sets a mark only where none is, so nothing is done twice.
 */
export async function runSubleaseEndTask(run: TaskRun): Promise<TaskOutcome> {
  const { allocation } = run;
  // Cut with its parent (or after it): the parent's own end wipes the node once; this only lets go of it.
  if (allocation.state !== AllocationState.Releasing && allocation.step === null && run.now().getTime() >= allocation.end.getTime()) {
    const parent = await run.deps.tasks.parentHold(allocation.id);
    if (!parentGoesOn(parent, run.now()) && isOpen(allocation.state)) return letGo(run);
  }
  const outcome = await runEndTask(run);
  if (outcome.kind !== 'done') return outcome;
  const { deps } = run;
  const current = await deps.tasks.getAllocationContext(run.allocation.id);
  if (current?.allocation.state !== AllocationState.Released) return DONE; // quarantined or dropped: nothing to hand back
  const parent = await deps.tasks.parentHold(run.allocation.id);
  if (!parentGoesOn(parent, run.now())) return DONE; // the parent's own end takes it from here
  const node = await deps.driver.getNode(run.nodeId);
  if (leaseMarkOf(node) !== null || node.lessee !== null) return DONE; // handed back already (or someone else's now)
  await run.recordNode(await setLeaseMark(deps.driver, node, { id: parent.lease_id, project_id: parent.project_id }));
  await run.update({}, [
    {
      type: 'allocation.handed_back',
      message: `sub-lease over: node ${run.nodeId} cleaned and handed back to project ${parent.project_id}`,
      details: { parent_lease_id: parent.lease_id, to: parent.project_id },
    },
  ]);
  deps.logger.child(run.logFields).info({ parent_lease_id: parent.lease_id }, 'sub-lease over: node cleaned and handed back');
  return DONE;
}

function isOpen(state: string): boolean {
  return state !== AllocationState.Released && state !== AllocationState.Quarantined && state !== AllocationState.Cancelled;
}

/**
 * A sub-lease whose parent ends with it: the sub-lessee's networks off (the owner's stay), its lessee and mark
 * cleared where they are still its own, `released` — the parent's end task cleans the node, once.
 */
async function letGo(run: TaskRun): Promise<TaskOutcome> {
  const { deps, lease } = run;
  const node = await deps.driver.getNode(run.nodeId);
  if (deps.networks) {
    await deps.networks.clearNode(run.nodeId, await deps.networks.ownerProjects(node), { actor: 'engine', lease_id: lease.id, reason: 'sub-lease over' });
  }
  const mark = leaseMarkOf(node);
  if (mark === lease.id || (mark === null && node.lessee === lease.project_id)) {
    await run.recordNode(await clearLeaseMark(deps.driver, node));
    await run.update({}, [{ type: 'node.lessee_cleared', message: `lessee ${node.lessee ?? '(none)'} cleared; the parent lease's end cleans the node` }]);
  }
  await run.update({ state: AllocationState.Released, step: null }, [
    { type: 'allocation.handed_back', message: `sub-lease over with its parent: node ${run.nodeId} left to the parent lease's cleaning`, details: { to: null } },
  ]);
  return DONE;
}
