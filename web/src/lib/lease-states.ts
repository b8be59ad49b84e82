import type { Lease } from '../api/client';

/** A lease's state as the API's enum says (generated from /openapi.json, which takes it from the server's domain). */
export type LeaseState = Lease['state'];

/** Every value of a union, in the order given: the compiler refuses a list that misses one or adds one. */
function allOf<T extends string>() {
  return <const L extends readonly T[]>(list: L & ([T] extends [L[number]] ? unknown : never)): L => list;
}

/** The lease states in lifecycle order (filters, badges). */
export const LEASE_STATES = allOf<LeaseState>()(['pending', 'active', 'ending', 'ended', 'cancelled', 'failed']);

/** Leases that hold or will hold nodes: upcoming (pending), running (active), being handed back (ending). */
export const OPEN_LEASE_STATES = ['pending', 'active', 'ending'] as const satisfies readonly LeaseState[];

/** Leases that change no more. */
export const FINISHED_LEASE_STATES = ['ended', 'cancelled', 'failed'] as const satisfies readonly LeaseState[];

export const isOpenLease = (state: string): boolean => (OPEN_LEASE_STATES as readonly string[]).includes(state);
export const isFinishedLease = (state: string): boolean => (FINISHED_LEASE_STATES as readonly string[]).includes(state);
