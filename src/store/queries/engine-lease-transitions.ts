import { deriveLeaseState } from './engine-derive-lease-state.js';

/** One allocation of a lease that a batch of progress writes touches, as the batch found it. */
export interface SiblingState {
  readonly id: string;
  readonly lease_id: string;
  readonly state: string;
  /** False for an allocation that left the lease early (returned, replaced): its history, not its state. */
  readonly counts: boolean;
}

/** A lease state change caused by the write at `index` of the batch. */
export interface LeaseTransition {
  readonly index: number;
  readonly lease_id: string;
  readonly from: string;
  readonly to: string;
}

/**
 * The lease state changes a batch of allocation writes causes, as if the writes had been committed one after the
 * other in batch order (each deriving its lease's state from every allocation as it is after it): the same
 * `lease.<state>` events, in the same places, as one transaction per write gave. Pure: the store reads the leases
 * and their allocations once, applies the writes in one statement and inserts what this returns.
 *
 * `writes[i]` names an allocation and the state it moves to (undefined: its state is unchanged). A write naming an
 * allocation not among `siblings` changes nothing.
 */
export function leaseTransitions(
  leaseStates: ReadonlyMap<string, string>,
  siblings: readonly SiblingState[],
  writes: readonly { readonly allocation_id: string; readonly state?: string | undefined }[],
): { readonly transitions: readonly LeaseTransition[]; readonly finalStates: ReadonlyMap<string, string> } {
  const current = new Map(leaseStates);
  const states = new Map(siblings.map((s) => [s.id, s.state]));
  const byLease = new Map<string, SiblingState[]>();
  for (const s of siblings) byLease.set(s.lease_id, [...(byLease.get(s.lease_id) ?? []), s]);
  const leaseOf = new Map(siblings.map((s) => [s.id, s.lease_id]));
  const transitions: LeaseTransition[] = [];
  writes.forEach((write, index) => {
    const leaseId = leaseOf.get(write.allocation_id);
    if (leaseId === undefined) return;
    if (write.state !== undefined) states.set(write.allocation_id, write.state);
    const from = current.get(leaseId);
    if (from === undefined) return;
    const counted = (byLease.get(leaseId) ?? []).filter((s) => s.counts).map((s) => states.get(s.id)!);
    const to = deriveLeaseState(from, counted);
    if (to === from) return;
    current.set(leaseId, to);
    transitions.push({ index, lease_id: leaseId, from, to });
  });
  const finalStates = new Map([...current].filter(([id, state]) => leaseStates.get(id) !== state));
  return { transitions, finalStates };
}

/**
 * Splits items into rounds in which no key repeats, keeping each key's items in order: one UPDATE ... FROM a list
 * may apply only one row per target, so two writes to one row go in two statements, the first one first.
 */
export function roundsByKey<T>(items: readonly T[], key: (item: T) => string): T[][] {
  const rounds: T[][] = [];
  const lastRound = new Map<string, number>();
  for (const item of items) {
    const k = key(item);
    const round = (lastRound.get(k) ?? -1) + 1;
    lastRound.set(k, round);
    (rounds[round] ??= []).push(item);
  }
  return rounds;
}
