import type { Lease, NewAuditEvent } from '../domain/leasing.js';

/**
 * Notices before a lease's end and auto-renew (issue 16, items 3 and 4): the store side of the engine's
 * timekeeper (engine/lease-timekeeper.ts) and of what the API shows. Implemented on both engines.
 */
export interface NoticeStore {
  /**
   * Writes every notice due at `now` with its `lease.ending_soon` event (and webhook) in one transaction, each once
   * per lease, offset and end whatever the number of engines; `defaultOffsetsMs` for projects without their own.
   * Resolves to the number of events written.
   */
  sendDueNotices(now: Date, defaultOffsetsMs: readonly number[]): Promise<number>;
  /** Per lease, the notices sent for its current end: offset (ms) → when. */
  sentNotices(leases: readonly { readonly id: string; readonly end: Date }[]): Promise<ReadonlyMap<string, ReadonlyMap<number, Date>>>;
  /** Sets or (null) clears a lease's auto-renew, turning it on again. ConflictError once the lease is over. */
  setAutoRenew(leaseId: string, renew: { readonly step_ms: number; readonly until: Date } | null, events: readonly NewAuditEvent[], now: Date): Promise<Lease>;
  /** Leases whose auto-renew is on and due at `now` (at most one step left), soonest end first. */
  dueRenewals(now: Date, limit: number): Promise<readonly string[]>;
  /** Ends a lease's auto-renew once (while on and still ending at `end`), with its events: whether this call did. */
  finishAutoRenew(
    leaseId: string,
    end: Date,
    outcome: { readonly state: 'done' | 'stopped'; readonly rule: string | null; readonly message: string | null },
    events: readonly NewAuditEvent[],
    now: Date,
  ): Promise<boolean>;
}
