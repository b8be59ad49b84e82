import type { Kysely } from 'kysely';
import { NotFoundError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import type { NewAuditEvent } from '../domain/leasing.js';
import type { Holding } from '../domain/reconcile.js';
import type { Database } from './database.js';
import { guarded } from './db-errors.js';
import type { AllocationContext, AllocationPatch, EngineStore, LeaseTask, TaskClaim, TaskLane } from './engine-store.js';
import { allocationContext } from './queries/engine-allocation-context.js';
import { parentHold, subleaseIdsOf, type ParentHold } from './queries/sublease-family.js';
import { claimDueTasks } from './queries/engine-claim-due-tasks.js';
import { nextDueAt } from './queries/engine-next-due.js';
import { updateAllocation } from './queries/engine-update-allocation.js';
import { insertEvents } from './queries/insert-events.js';
import { dropLeaderLease, tryLeaderLease } from './queries/leader-lease.js';
import { nodeOwnerProject } from './queries/node-owner-project.js';
import { reconcileHoldings } from './queries/reconcile-holdings.js';

/**
 * The EngineStore on Kysely, for PGlite and PostgreSQL alike. Claims use FOR UPDATE SKIP LOCKED with an expiring
 * claim, so any number of replicas share the due tasks and a crashed worker's task is taken over once its claim
 * expires (see queries/engine-claim-due-tasks.ts for which tasks wait for others). Completing or re-scheduling a
 * task that is already done changes nothing: a worker whose claim expired cannot reopen finished work.
 */
export class KyselyEngineStore implements EngineStore {
  constructor(private readonly db: Kysely<Database>) {}

  parentHold(allocationId: string): Promise<ParentHold | null> {
    return guarded(async () => (isUuid(allocationId) ? parentHold(this.db, allocationId) : null));
  }

  subleaseIdsOf(allocationId: string): Promise<readonly string[]> {
    return guarded(async () => (isUuid(allocationId) ? subleaseIdsOf(this.db, allocationId) : []));
  }

  claimDueTasks(worker: string, now: Date, limit: number, claimMs: number, lane?: TaskLane): Promise<readonly LeaseTask[]> {
    return guarded(() => claimDueTasks(this.db, worker, now, Math.max(0, Math.floor(limit)), claimMs, lane ?? null));
  }

  completeTask(id: string, now: Date, claimedBy?: string): Promise<boolean> {
    return guarded(async () => {
      if (!isUuid(id)) throw new NotFoundError('task', id);
      const result = await this.db
        .updateTable('lease_tasks')
        .set({ done_at: now, locked_by: null, locked_until: null })
        .where('id', '=', id)
        .where('done_at', 'is', null)
        .$if(claimedBy !== undefined, (qb) => qb.where('locked_by', '=', claimedBy!))
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    });
  }

  retryTask(id: string, dueAt: Date, error: string | null, _now: Date, claimedBy?: string): Promise<boolean> {
    return guarded(async () => {
      if (!isUuid(id)) throw new NotFoundError('task', id);
      const result = await this.db
        .updateTable('lease_tasks')
        .set((eb) => ({
          due_at: dueAt,
          attempts: eb('attempts', '+', 1),
          last_error: error,
          locked_by: null,
          locked_until: null,
        }))
        .where('id', '=', id)
        .where('done_at', 'is', null)
        .$if(claimedBy !== undefined, (qb) => qb.where('locked_by', '=', claimedBy!))
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    });
  }

  renewClaims(worker: string, now: Date, claimMs: number): Promise<number> {
    return guarded(async () => {
      const result = await this.db
        .updateTable('lease_tasks')
        .set({ locked_until: new Date(now.getTime() + claimMs) })
        .where('locked_by', '=', worker)
        .where('done_at', 'is', null)
        // A claim that already expired may have been taken over (or may be any moment): it is not revived.
        .where('locked_until', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    });
  }

  releaseAllClaims(): Promise<number> {
    return guarded(async () => {
      const rows = await this.db
        .updateTable('lease_tasks')
        .set({ locked_by: null, locked_until: null })
        .where('done_at', 'is', null)
        .where('locked_by', 'is not', null)
        .returning('id')
        .execute();
      await this.db.deleteFrom('leader_leases').execute();
      return rows.length;
    });
  }

  nextDueAt(): Promise<Date | null> {
    return guarded(() => nextDueAt(this.db));
  }

  getAllocationContext(allocationId: string): Promise<AllocationContext | null> {
    return guarded(async () => (isUuid(allocationId) ? allocationContext(this.db, allocationId) : null));
  }

  updateAllocation(id: string, patch: AllocationPatch, now: Date, events: readonly NewAuditEvent[] = [], claim?: TaskClaim): Promise<void> {
    return guarded(() => updateAllocation(this.db, id, patch, now, events, claim));
  }

  quarantineNode(nodeId: string, reason: string, now: Date): Promise<void> {
    return guarded(async () => {
      const result = await this.db
        .updateTable('nodes')
        // A node already quarantined keeps the time it was first quarantined; the reason is the latest.
        .set((eb) => ({ quarantined_at: eb.fn.coalesce('quarantined_at', eb.val(now)), quarantine_reason: reason }))
        .where('id', '=', nodeId)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) throw new NotFoundError('node', nodeId);
    });
  }

  retryNow(now: Date): Promise<number> {
    return guarded(async () => {
      const rows = await this.db
        .updateTable('lease_tasks')
        .set({ due_at: now })
        .where('done_at', 'is', null)
        // Failed runs keep their error; waits (cleaning under way) do not, and keep their time.
        .where('last_error', 'is not', null)
        .where('due_at', '>', now)
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
        .returning('id')
        .execute();
      return rows.length;
    });
  }

  holdings(): Promise<readonly Holding[]> {
    return guarded(() => reconcileHoldings(this.db));
  }

  recordNodeEvents(nodeId: string, events: readonly NewAuditEvent[], now: Date): Promise<void> {
    return guarded(async () => {
      if (events.length === 0) return;
      const owner = await nodeOwnerProject(this.db, nodeId);
      await insertEvents(
        this.db,
        events.map((e) => ({ ...e, node_id: e.node_id ?? nodeId, owner_project_id: e.owner_project_id ?? owner })),
        now,
      );
    });
  }

  tryLeaderLease(name: string, holder: string, now: Date, ttlMs: number): Promise<boolean> {
    return guarded(() => tryLeaderLease(this.db, name, holder, now, ttlMs));
  }

  dropLeaderLease(name: string, holder: string): Promise<void> {
    return guarded(() => dropLeaderLease(this.db, name, holder));
  }
}
