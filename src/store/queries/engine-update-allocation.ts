import type { Kysely } from 'kysely';
import { ClaimLostError, NotFoundError } from '../../domain/errors.js';
import { isUuid } from '../../domain/ids.js';
import type { NewAuditEvent } from '../../domain/leasing.js';
import type { Database } from '../database.js';
import type { AllocationPatch, TaskClaim } from '../engine-store.js';
import { deriveLeaseState } from './engine-derive-lease-state.js';
import { insertEngineEvents } from './engine-insert-events.js';
import { nodeOwnerProject } from './node-owner-project.js';

/**
 * Writes an allocation's progress, its events and its lease's derived state in one transaction. The lease row
 * is locked first, so two allocations of one lease finishing at the same moment (two replicas) derive the state
 * one after the other and the last one sees both. A change of the lease's state is itself an event
 * (`lease.<state>`). With a `claim`, nothing is written unless that worker still holds that task's claim.
 */
export async function updateAllocation(
  db: Kysely<Database>,
  id: string,
  patch: AllocationPatch,
  now: Date,
  events: readonly NewAuditEvent[],
  claim?: TaskClaim,
): Promise<void> {
  if (!isUuid(id)) throw new NotFoundError('allocation', id);
  await db.transaction().execute(async (trx) => {
    const lease = await trx
      .selectFrom('leases')
      .select(['id', 'project_id', 'state'])
      .where('id', '=', (eb) => eb.selectFrom('allocations').select('lease_id').where('id', '=', id))
      .forUpdate()
      .executeTakeFirst();
    if (!lease) throw new NotFoundError('allocation', id);
    if (claim) {
      // The fence: the task row is locked for the rest of the transaction, so a takeover (whose claim skips
      // locked rows) happens wholly before or wholly after this write, never in between.
      const held = await trx
        .selectFrom('lease_tasks')
        .select('id')
        .where('id', '=', claim.taskId)
        .where('locked_by', '=', claim.worker)
        .where('done_at', 'is', null)
        .forUpdate()
        .executeTakeFirst();
      if (!held) throw new ClaimLostError(claim.taskId, claim.worker);
    }

    const allocation = await trx
      .updateTable('allocations')
      .set({
        updated_at: now,
        ...(patch.state !== undefined && { state: patch.state }),
        ...(patch.step !== undefined && { step: patch.step }),
        ...(patch.last_error !== undefined && { last_error: patch.last_error }),
        ...(patch.node_maintenance_at !== undefined && { node_maintenance_at: patch.node_maintenance_at }),
      })
      .where('id', '=', id)
      .returning(['node_id'])
      .executeTakeFirst();
    if (!allocation) throw new NotFoundError('allocation', id);

    const defaults = {
      lease_id: lease.id,
      node_id: allocation.node_id,
      project_id: lease.project_id,
      owner_project_id: await nodeOwnerProject(trx, allocation.node_id),
    };

    const siblings = await trx.selectFrom('allocations').select('state').where('lease_id', '=', lease.id).execute();
    const next = deriveLeaseState(lease.state, siblings.map((s) => s.state));
    const all = [...events];
    if (next !== lease.state) {
      await trx.updateTable('leases').set({ state: next, updated_at: now }).where('id', '=', lease.id).execute();
      all.push({
        type: `lease.${next}`,
        actor: 'engine',
        outcome: next === 'failed' ? 'error' : 'ok',
        // About the whole lease: not tied to this node or its owner.
        node_id: null,
        owner_project_id: null,
        message: `lease is ${next}`,
        details: { from: lease.state, to: next },
      });
    }
    await insertEngineEvents(trx, all, defaults, now);
  });
}
