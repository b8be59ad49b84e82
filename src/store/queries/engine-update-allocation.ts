import { sql, type Kysely } from 'kysely';
import { ClaimLostError, NotFoundError } from '../../domain/errors.js';
import { isUuid } from '../../domain/ids.js';
import type { NewAuditEvent } from '../../domain/leasing.js';
import type { Database } from '../database.js';
import type { AllocationPatch, TaskClaim } from '../engine-store.js';
import { deriveLeaseState } from './engine-derive-lease-state.js';
import { insertEngineEvents } from './engine-insert-events.js';

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
    // The lease row locked, and with a claim the task row too (the fence: a takeover, whose claim skips locked
    // rows, happens wholly before or wholly after this write, never in between), in one statement.
    const { rows: locked } = await sql<{ id: string; project_id: string; state: string }>`
      select l.id, l.project_id, l.state
        from leases l
        ${claim ? sql`join lease_tasks t on t.id = ${claim.taskId} and t.locked_by = ${claim.worker} and t.done_at is null` : sql``}
       where l.id = (select lease_id from allocations where id = ${id})
         for update${claim ? sql` of l, t` : sql``}`.execute(trx);
    const lease = locked[0];
    if (!lease) {
      const exists = await trx.selectFrom('allocations').select('id').where('id', '=', id).executeTakeFirst();
      if (!exists) throw new NotFoundError('allocation', id);
      throw new ClaimLostError(claim!.taskId, claim!.worker);
    }

    // The update returns what the events and the lease's state need: the node's owner project and every state
    // of the lease's allocations as they are after it (RETURNING sees the new row, the subquery the others).
    const { rows: updated } = await sql<{ node_id: string; owner_project_id: string | null; states: string[] }>`
      update allocations a set ${sql.join(
        Object.entries({
          updated_at: now,
          ...(patch.state !== undefined && { state: patch.state }),
          ...(patch.step !== undefined && { step: patch.step }),
          ...(patch.last_error !== undefined && { last_error: patch.last_error }),
          ...(patch.node_maintenance_at !== undefined && { node_maintenance_at: patch.node_maintenance_at }),
        }).map(([column, value]) => sql`${sql.ref(column)} = ${value}`),
      )}
       where a.id = ${id}
      returning a.node_id,
        (select coalesce(by_id.id, by_name.id) from nodes n
           left join projects by_id on by_id.id = n.owner
           left join projects by_name on by_name.name = n.owner
          where n.id = a.node_id) as owner_project_id,
        -- Allocations that left the lease early (returned, replaced) are its history: they do not make it "ending".
        (select coalesce(array_agg(case when s.id = a.id then a.state else s.state end) filter (where s.leave_reason is null), '{}')
           from allocations s where s.lease_id = a.lease_id) as states`.execute(trx);
    const allocation = updated[0];
    if (!allocation) throw new NotFoundError('allocation', id);
    const siblings = allocation.states.map((state) => ({ state }));

    const defaults = {
      lease_id: lease.id,
      node_id: allocation.node_id,
      project_id: lease.project_id,
      owner_project_id: allocation.owner_project_id,
    };

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
