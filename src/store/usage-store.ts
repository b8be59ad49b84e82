import type { UsageSpan } from '../domain/usage.js';

/** Whose use a report covers: every project's (the operator), a lessee's own, or the use of an owner's nodes. */
export interface UsageFilter {
  readonly from: Date;
  readonly to: Date;
  /** Only this lessee project's use. */
  readonly lessee_project_id?: string;
  /** Only use of nodes this project owned when the allocation was written. */
  readonly owner_project_id?: string;
}

/** Usage accounting (issue 17, migration 0014). */
export interface UsageStore {
  /**
   * Each allocation's actual use overlapping [from, to) as of `now` (domain/usage.ts `actualUse`), unclipped,
   * with what it was when written: node, lessee and owner projects (names as they are now), resource class, price.
   */
  spans(filter: UsageFilter, now: Date): Promise<readonly UsageSpan[]>;
}
