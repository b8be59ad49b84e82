import type { Kysely } from 'kysely';
import { isUuid } from '../domain/ids.js';
import type { HeldAllocation } from '../domain/subleasing.js';
import type { Database } from './database.js';
import { guarded as guard } from './db-errors.js';
import { heldOnNode } from './queries/sublease-held.js';
import { parentOnNode, subleaseLinks, type LinkedLease, type SubleaseLinks } from './queries/sublease-links.js';
import type { SubleaseStore } from './sublease-store.js';

/** Sub-leasing reads on Kysely (PGlite and PostgreSQL alike). */
export class KyselySubleaseStore implements SubleaseStore {
  constructor(private readonly db: Kysely<Database>) {}

  heldOnNode(nodeId: string, projectId: string, now: Date): Promise<readonly HeldAllocation[]> {
    return guard(() => heldOnNode(this.db, nodeId, projectId, now));
  }

  links(allocationIds: readonly string[]): Promise<ReadonlyMap<string, SubleaseLinks>> {
    return guard(() => subleaseLinks(this.db, allocationIds));
  }

  parentOnNode(nodeId: string, leaseId: string, at: Date): Promise<LinkedLease | null> {
    if (!isUuid(leaseId)) return Promise.resolve(null);
    return guard(() => parentOnNode(this.db, nodeId, leaseId, at));
  }
}
