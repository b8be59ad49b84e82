import type { HeldAllocation } from '../domain/subleasing.js';
import type { LinkedLease, SubleaseLinks } from './queries/sublease-links.js';

export type { LinkedLease, SubleaseLinks } from './queries/sublease-links.js';

/**
 * Sub-leasing, one level (domain/subleasing.ts), as the entry points read it. Writing goes through the leasing
 * store: a sub-offer is an offer with `parent_allocation_id`; a lease booked from one gets sub-allocations (in
 * createLease's transaction); whatever cuts a parent allocation cuts its sub-leases in the same transaction
 * (queries/sublease-cut.ts).
 */
export interface SubleaseStore {
  /** The project's allocations on the node still in their lease and not over at `now` (a sub-offer's parents). */
  heldOnNode(nodeId: string, projectId: string, now: Date): Promise<readonly HeldAllocation[]>;
  /** Per allocation (by id), the lease it is sub-leased from and the sub-leases carved from it (only those with a link). */
  links(allocationIds: readonly string[]): Promise<ReadonlyMap<string, SubleaseLinks>>;
  /** The lease that `leaseId`'s hold on the node at `at` is sub-leased from, or null (not a sub-lease). */
  parentOnNode(nodeId: string, leaseId: string, at: Date): Promise<LinkedLease | null>;
}
