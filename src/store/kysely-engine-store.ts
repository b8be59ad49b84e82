import { sql, type Kysely } from 'kysely';
import { ClaimLostError, NotFoundError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import type { NewAuditEvent } from '../domain/leasing.js';
import type { Holding } from '../domain/reconcile.js';
import type { Database } from './database.js';
import { guarded } from './db-errors.js';
import type {
  AllocationContext,
  AllocationPatch,
  AllocationWrite,
  AllocationWriteResult,
  EngineStore,
  LeaseTask,
  TaskClaim,
  TaskLane,
  TaskSettlement,
} from './engine-store.js';
import { allocationContexts } from './queries/engine-allocation-context.js';
import { settleTasks } from './queries/engine-settle-tasks.js';
import { parentHold, subleaseIdsOf, type ParentHold } from './queries/sublease-family.js';
import { claimDueTasks } from './queries/engine-claim-due-tasks.js';
import { nextDueAt } from './queries/engine-next-due.js';
import { updateAllocations } from './queries/engine-update-allocations.js';
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
    return this.settleOne({ id, ...(claimedBy !== undefined && { claimedBy }), outcome: { kind: 'done' } }, now);
  }

  retryTask(id: string, dueAt: Date, error: string | null, now: Date, claimedBy?: string): Promise<boolean> {
    return this.settleOne({ id, ...(claimedBy !== undefined && { claimedBy }), outcome: { kind: 'retry', dueAt, error } }, now);
  }

  private async settleOne(settlement: TaskSettlement, now: Date): Promise<boolean> {
    const [changed] = await this.settleTasks([settlement], now);
    return changed!;
  }

  settleTasks(settlements: readonly TaskSettlement[], now: Date): Promise<readonly boolean[]> {
    return guarded(async () => {
      const bad = settlements.find((s) => !isUuid(s.id));
      if (bad) throw new NotFoundError('task', bad.id);
      return settleTasks(this.db, settlements, now);
    });
  }

  renewClaims(worker: string, now: Date, claimMs: number): Promise<number> {
    return guarded(async () => {
      // The rows are locked in id order, as a batch of progress writes locks its tasks (engine-update-allocations):
      // a heartbeat beside a batch waits for it instead of deadlocking with it.
      const { rows } = await sql<{ id: string }>`
        update lease_tasks set locked_until = ${new Date(now.getTime() + claimMs)}
         where id in (
           select id from lease_tasks
            where locked_by = ${worker}
              and done_at is null
              -- A claim that already expired may have been taken over (or may be any moment): it is not revived.
              and locked_until > ${now}
            order by id
              for update)
        returning id`.execute(this.db);
      return rows.length;
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
    return guarded(async () => (isUuid(allocationId) ? ((await allocationContexts(this.db, [allocationId])).get(allocationId) ?? null) : null));
  }

  allocationContexts(allocationIds: readonly string[]): Promise<ReadonlyMap<string, AllocationContext>> {
    return guarded(() => allocationContexts(this.db, allocationIds.filter(isUuid)));
  }

  updateAllocation(id: string, patch: AllocationPatch, now: Date, events: readonly NewAuditEvent[] = [], claim?: TaskClaim): Promise<void> {
    return guarded(async () => {
      if (!isUuid(id)) throw new NotFoundError('allocation', id);
      const [result] = await updateAllocations(this.db, [{ id, patch, events, ...(claim && { claim }), at: now }], now);
      if (result === 'not_found') throw new NotFoundError('allocation', id);
      if (result === 'claim_lost') throw new ClaimLostError(claim!.taskId, claim!.worker);
    });
  }

  updateAllocations(writes: readonly AllocationWrite[], now: Date): Promise<readonly AllocationWriteResult[]> {
    return guarded(async () => {
      // A malformed id names nothing: its write is refused alone, not the batch.
      const valid = writes.filter((w) => isUuid(w.id));
      const results = await updateAllocations(this.db, valid, now);
      const byWrite = new Map(valid.map((w, i) => [w, results[i]!]));
      return writes.map((w) => byWrite.get(w) ?? 'not_found');
    });
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
