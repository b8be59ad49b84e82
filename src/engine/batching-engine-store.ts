import { BackendUnavailableError, ClaimLostError, NotFoundError } from '../domain/errors.js';
import type { NewAuditEvent } from '../domain/leasing.js';
import type { Holding } from '../domain/reconcile.js';
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
} from '../store/engine-store.js';
import type { ParentHold } from '../store/queries/sublease-family.js';
import { Coalescer } from '../store/coalescer.js';

/** Rows one batch statement carries at most (a write is one row and a few events). */
export const MAX_BATCH = 500;

/** A failure that may be one item's rather than the store's: worth trying the items of its batch one by one. */
const mayBeOneItems = (err: unknown): boolean => !(err instanceof BackendUnavailableError);

const latest = (dates: readonly Date[]): Date => new Date(Math.max(...dates.map((d) => d.getTime())));

/**
 * The engine's view of the store with its per-task calls gathered into batches (issue 15, "1,000 simultaneous
 * ends"): every task run reads its allocation, writes its progress and completes or re-schedules itself, and the
 * runs in flight make those calls at about the same moments. Here the calls made in one turn of the event loop
 * (or while the previous batch was being written) go to the store together — one query for the contexts, one
 * transaction for the writes, one statement for the settlements — instead of one transaction each.
 *
 * Nothing about a task's guarantees changes: each write is still fenced by its own claim in the store (a write
 * whose claim was lost is not written and its caller gets ClaimLostError, while the rest of the batch is written),
 * each caller's own calls still happen in its order (it awaits each), and a crash loses a batch's writes together,
 * each task resuming at its recorded step as before. The task code (TaskRun, the steps) is unchanged.
 */
export class BatchingEngineStore implements EngineStore {
  private readonly contexts: Coalescer<string, AllocationContext | null>;
  private readonly writes: Coalescer<AllocationWrite, AllocationWriteResult>;
  private readonly settlements: Coalescer<{ readonly settlement: TaskSettlement; readonly now: Date }, boolean>;

  constructor(private readonly store: EngineStore, maxBatch = MAX_BATCH) {
    const options = { maxBatch, isolate: mayBeOneItems };
    this.contexts = new Coalescer(async (ids) => {
      const found = await store.allocationContexts(ids);
      return ids.map((id) => found.get(id) ?? null);
    }, options);
    this.writes = new Coalescer((writes) => store.updateAllocations(writes, latest(writes.map((w) => w.at))), options);
    this.settlements = new Coalescer(
      (items) => store.settleTasks(items.map((i) => i.settlement), latest(items.map((i) => i.now))),
      options,
    );
  }

  getAllocationContext(allocationId: string): Promise<AllocationContext | null> {
    return this.contexts.submit(allocationId);
  }

  async updateAllocation(id: string, patch: AllocationPatch, now: Date, events: readonly NewAuditEvent[] = [], claim?: TaskClaim): Promise<void> {
    const result = await this.writes.submit({ id, patch, events, ...(claim && { claim }), at: now });
    if (result === 'not_found') throw new NotFoundError('allocation', id);
    if (result === 'claim_lost') throw new ClaimLostError(claim!.taskId, claim!.worker);
  }

  completeTask(id: string, now: Date, claimedBy?: string): Promise<boolean> {
    return this.settlements.submit({ settlement: { id, ...(claimedBy !== undefined && { claimedBy }), outcome: { kind: 'done' } }, now });
  }

  retryTask(id: string, dueAt: Date, error: string | null, now: Date, claimedBy?: string): Promise<boolean> {
    return this.settlements.submit({
      settlement: { id, ...(claimedBy !== undefined && { claimedBy }), outcome: { kind: 'retry', dueAt, error } },
      now,
    });
  }

  // Already batches, or rare enough to go straight to the store.
  allocationContexts(allocationIds: readonly string[]): Promise<ReadonlyMap<string, AllocationContext>> {
    return this.store.allocationContexts(allocationIds);
  }
  updateAllocations(writes: readonly AllocationWrite[], now: Date): Promise<readonly AllocationWriteResult[]> {
    return this.store.updateAllocations(writes, now);
  }
  settleTasks(settlements: readonly TaskSettlement[], now: Date): Promise<readonly boolean[]> {
    return this.store.settleTasks(settlements, now);
  }
  parentHold(allocationId: string): Promise<ParentHold | null> {
    return this.store.parentHold(allocationId);
  }
  subleaseIdsOf(allocationId: string): Promise<readonly string[]> {
    return this.store.subleaseIdsOf(allocationId);
  }
  claimDueTasks(worker: string, now: Date, limit: number, claimMs: number, lane?: TaskLane): Promise<readonly LeaseTask[]> {
    return this.store.claimDueTasks(worker, now, limit, claimMs, lane);
  }
  releaseAllClaims(): Promise<number> {
    return this.store.releaseAllClaims();
  }
  renewClaims(worker: string, now: Date, claimMs: number): Promise<number> {
    return this.store.renewClaims(worker, now, claimMs);
  }
  nextDueAt(): Promise<Date | null> {
    return this.store.nextDueAt();
  }
  quarantineNode(nodeId: string, reason: string, now: Date): Promise<void> {
    return this.store.quarantineNode(nodeId, reason, now);
  }
  retryNow(now: Date): Promise<number> {
    return this.store.retryNow(now);
  }
  holdings(): Promise<readonly Holding[]> {
    return this.store.holdings();
  }
  recordNodeEvents(nodeId: string, events: readonly NewAuditEvent[], now: Date): Promise<void> {
    return this.store.recordNodeEvents(nodeId, events, now);
  }
  tryLeaderLease(name: string, holder: string, now: Date, ttlMs: number): Promise<boolean> {
    return this.store.tryLeaderLease(name, holder, now, ttlMs);
  }
  dropLeaderLease(name: string, holder: string): Promise<void> {
    return this.store.dropLeaderLease(name, holder);
  }
}
