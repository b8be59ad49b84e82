import type { Kysely } from 'kysely';
import type { Database } from '../database.js';
import type { AllocationContext } from '../engine-store.js';
import { selectAllocations, toAllocation, toLease } from '../leasing-rows.js';

/**
 * Allocations with their leases (without the leases' other allocations), by allocation id; one missing when it or
 * its lease is gone. One query for any number (every task run of the engine starts with one: a claimed batch
 * reads them together). Ids must be UUIDs (the caller checks).
 */
export async function allocationContexts(db: Kysely<Database>, allocationIds: readonly string[]): Promise<Map<string, AllocationContext>> {
  const contexts = new Map<string, AllocationContext>();
  if (allocationIds.length === 0) return contexts;
  const rows = await selectAllocations(db)
    .innerJoin('leases as l', 'l.id', 'a.lease_id')
    .leftJoin('nodes as n', 'n.id', 'a.node_id')
    .select(['n.id as recorded_uuid', 'n.owner as recorded_owner', 'n.lessee as recorded_lessee', 'n.extra as recorded_extra'])
    .select([
      'l.name as lease_name',
      'l.project_id as lease_project_id',
      'l.created_by as lease_created_by',
      'l.start_at as lease_start_at',
      'l.end_at as lease_end_at',
      'l.state as lease_state',
      'l.request as lease_request',
      'l.created_at as lease_created_at',
      'l.updated_at as lease_updated_at',
      'l.cancelled_at as lease_cancelled_at',
      'l.replace_policy as lease_replace_policy',
    ])
    .where('a.id', 'in', [...new Set(allocationIds)])
    .execute();
  for (const row of rows) {
    const { allocations: _omitted, ...lease } = toLease(
      {
        id: row.lease_id,
        name: row.lease_name,
        project_id: row.lease_project_id,
        created_by: row.lease_created_by,
        start_at: row.lease_start_at,
        end_at: row.lease_end_at,
        state: row.lease_state,
        request: row.lease_request as Record<string, unknown>,
        created_at: row.lease_created_at,
        updated_at: row.lease_updated_at,
        cancelled_at: row.lease_cancelled_at,
        replace_policy: row.lease_replace_policy,
      },
      [],
    );
    const recorded =
      row.recorded_uuid === null
        ? null
        : { uuid: row.recorded_uuid, owner: row.recorded_owner, lessee: row.recorded_lessee, extra: (row.recorded_extra ?? {}) as Record<string, unknown> };
    contexts.set(row.id, { allocation: toAllocation(row), lease, recorded });
  }
  return contexts;
}
