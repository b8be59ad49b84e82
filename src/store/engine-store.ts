import type { ParentHold } from './queries/sublease-family.js';
import type { Allocation, AllocationState, Lease, NewAuditEvent, ReleaseStep } from '../domain/leasing.js';
import type { Holding } from '../domain/reconcile.js';

/**
 * The lease engine's port onto the store: due tasks and allocation progress. Tasks are written by the leasing
 * store in the same transaction as the lease change that causes them (create, extend, shorten, cancel); the engine
 * claims, runs and completes them. Implemented on both engines (PGlite, PostgreSQL).
 */
export interface LeaseTask {
  readonly id: string;
  readonly lease_id: string;
  readonly allocation_id: string;
  /** `start`: hand the node to the lessee. `end`: take it back and clean it. */
  readonly kind: 'start' | 'end';
  readonly due_at: Date;
  readonly attempts: number;
  readonly last_error: string | null;
}

/**
 * The engine's two queues of due work: `mark` is Ironic's lessee mark — every start, and every end before its
 * lessee is cleared — and `release` the rest of an end (power off, cleaning, waiting for it). Each has its own
 * workers, so taking access away in Ironic never waits behind cleanings (issue 15: 200 ends cleared lessees at a
 * fifth of Ironic's rate when both shared one batch).
 */
export type TaskLane = 'mark' | 'release';

/** Which worker's claim on which task a write is made under (a fence: see EngineStore.updateAllocation). */
export interface TaskClaim {
  readonly taskId: string;
  readonly worker: string;
}

export interface AllocationContext {
  readonly allocation: Allocation;
  readonly lease: Omit<Lease, 'allocations'>;
  /**
   * Who holds the node as Leasehold last recorded it from Ironic (the hand-over records the node as Ironic
   * answered its PATCH; every sync records it again); null when the node is not in the inventory. The release
   * clears a mark it shows as this lease's without reading the node first (release-steps.ts).
   */
  readonly recorded?: RecordedMarks | null;
}

/** Who holds a node, as recorded (the driver's NodeMarks, written by the store's layer without importing it). */
export interface RecordedMarks {
  readonly uuid: string;
  readonly owner: string | null;
  readonly lessee: string | null;
  readonly extra: Readonly<Record<string, unknown>>;
}

export interface AllocationPatch {
  readonly state?: AllocationState;
  /** null clears it. */
  readonly step?: ReleaseStep | null;
  readonly last_error?: string | null;
  /** Since when the node is seen in maintenance (reconciliation); null clears it. */
  readonly node_maintenance_at?: Date | null;
}

/** One allocation's progress, as a batch write carries it (see EngineStore.updateAllocations). */
export interface AllocationWrite {
  readonly id: string;
  readonly patch: AllocationPatch;
  readonly events: readonly NewAuditEvent[];
  /** The claim the write is fenced by; absent: unfenced. */
  readonly claim?: TaskClaim;
  /** When the progress was made: the allocation's `updated_at`. */
  readonly at: Date;
}

/** What became of one write of a batch: written, or not written because its claim was lost or it names nothing. */
export type AllocationWriteResult = 'written' | 'claim_lost' | 'not_found';

/** A task run's end, as a batch carries it (see EngineStore.settleTasks). */
export interface TaskSettlement {
  readonly id: string;
  /** Only while this worker holds the claim. */
  readonly claimedBy?: string;
  readonly outcome: { readonly kind: 'done' } | { readonly kind: 'retry'; readonly dueAt: Date; readonly error: string | null };
}

export interface EngineStore {
  /** A sub-allocation's parent allocation with its lease, or null: where the node goes when the sub-lease ends. */
  parentHold(allocationId: string): Promise<ParentHold | null>;
  /** The leases sub-leasing an allocation's node: their marks on the node are the parent release's to clear. */
  subleaseIdsOf(allocationId: string): Promise<readonly string[]>;
  /**
   * Claims up to `limit` tasks that are due at `now`, not done, and not claimed by a live claim, for `worker`
   * until `now + claimMs` (FOR UPDATE SKIP LOCKED: two workers never claim one task). A claim that expired
   * (its worker died) is claimed again. Each lease's earliest due task first, then each lease's second, and so on
   * (by due time within a turn). Held-back tasks (see nextDueAt) are not handed out. With `lane`, only that
   * queue's tasks.
   */
  claimDueTasks(worker: string, now: Date, limit: number, claimMs: number, lane?: TaskLane): Promise<readonly LeaseTask[]>;
  /**
   * Drops every claim (task claims and leader leases). Only for a process that knows no other worker can be alive — the embedded store, which one
   * process holds — so a restart after a crash resumes at once instead of after the claim expires.
   */
  releaseAllClaims(): Promise<number>;
  /**
   * Extends every live claim of `worker` on unfinished tasks to `now + claimMs` (the worker's heartbeat): a claim
   * lasts as long as its worker is alive and reaching the store, and a crashed worker's claims expire within
   * `claimMs` of its last heartbeat. Resolves to how many claims were renewed.
   */
  renewClaims(worker: string, now: Date, claimMs: number): Promise<number>;
  /**
   * Marks the task done and releases the claim. With `claimedBy`, only while that worker still holds the claim
   * (a worker whose claim was taken over by another changes nothing); resolves to whether the task was changed.
   */
  completeTask(id: string, now: Date, claimedBy?: string): Promise<boolean>;
  /**
   * Releases the claim and makes the task due again at `dueAt`, counting the attempt and keeping the error; with
   * `claimedBy`, only while that worker holds the claim. Resolves to whether the task was changed.
   */
  retryTask(id: string, dueAt: Date, error: string | null, now: Date, claimedBy?: string): Promise<boolean>;
  /**
   * When to wake up next, or null: the earliest due time of the tasks not done, counting a claimed task from when
   * its claim expires and leaving out tasks held back (an end before its start; a start while the node's previous
   * allocation is unfinished or the node is quarantined) — else replicas would wake in a loop.
   */
  nextDueAt(): Promise<Date | null>;
  getAllocationContext(allocationId: string): Promise<AllocationContext | null>;
  /** Many allocations with their leases in one query, by allocation id (one that is gone is missing). */
  allocationContexts(allocationIds: readonly string[]): Promise<ReadonlyMap<string, AllocationContext>>;
  /**
   * Records an allocation's progress and, in the same transaction, the events and the lease's derived state:
   * active once every allocation is active, ended once every allocation is released or quarantined.
   * With `claim`, the write is fenced: it is made only while that worker still holds that task's claim, else
   * nothing is written and it fails with ClaimLostError (a worker that stalled past its claim and was taken
   * over never records a step twice).
   */
  updateAllocation(id: string, patch: AllocationPatch, now: Date, events?: readonly NewAuditEvent[], claim?: TaskClaim): Promise<void>;
  /**
   * Many updateAllocation writes in one transaction of a fixed number of statements (the engine's batches):
   * each write fenced by its own claim — one whose claim was lost (or that names no allocation) is not written,
   * the others are — and the leases' states and `lease.<state>` events as if the writes had been made one after
   * the other in this order. The events are written at `now`. Resolves to each write's result, in order.
   */
  updateAllocations(writes: readonly AllocationWrite[], now: Date): Promise<readonly AllocationWriteResult[]>;
  /**
   * Many completeTask / retryTask calls in one statement; resolves to whether each changed its task, in order.
   */
  settleTasks(settlements: readonly TaskSettlement[], now: Date): Promise<readonly boolean[]>;
  /** Quarantines a node (no new leases until cleared), with the reason (e.g. Ironic's last_error). */
  quarantineNode(nodeId: string, reason: string, now: Date): Promise<void>;

  /**
   * Makes every unfinished task that is waiting out a backoff due at `now` (the backend it failed on is back):
   * the engine catches up at once instead of after up to a minute of backoff. Resolves to how many.
   */
  retryNow(now: Date): Promise<number>;

  // Reconciliation (engine/reconciler.ts).
  /** Every unfinished allocation (reserved, starting, active, releasing) with its lease's facts. */
  holdings(): Promise<readonly Holding[]>;
  /** Appends events about one node (not tied to an allocation), with the node's owner resolved for visibility. */
  recordNodeEvents(nodeId: string, events: readonly NewAuditEvent[], now: Date): Promise<void>;
  /**
   * Takes or renews the named leader lease (one replica does the named work at a time) until `now + ttlMs`;
   * resolves to whether `holder` holds it. An expired lease (its holder died) is taken over.
   */
  tryLeaderLease(name: string, holder: string, now: Date, ttlMs: number): Promise<boolean>;
  /** Gives the named leader lease up if `holder` holds it. */
  dropLeaderLease(name: string, holder: string): Promise<void>;
}
