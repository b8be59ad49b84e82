import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import type { AllocationContext } from '../engine-store.js';
import { selectAllocations, toAllocation, toLease } from '../leasing-rows.js';

/** An allocation with its lease (without the lease's other allocations), or null when either is gone. */
export async function allocationContext(db: Kysely<Database>, allocationId: string): Promise<AllocationContext | null> {
  const row = await selectAllocations(db).where('a.id', '=', allocationId).executeTakeFirst();
  if (!row) return null;
  const lease = await db.selectFrom('leases').selectAll().where('id', '=', row.lease_id).executeTakeFirst();
  if (!lease) return null;
  const { allocations: _omitted, ...rest } = toLease(lease, []);
  return { allocation: toAllocation(row), lease: rest };
}
