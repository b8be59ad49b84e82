import { sql, type Kysely, type Transaction } from 'kysely';
import type { Lease, NewAuditEvent } from '../../domain/leasing.js';
import type { Database } from '../database.js';
import { loadLeases } from '../leasing-rows.js';
import type { NewLease } from '../leasing-store.js';
import { checkQuota, quotaSpan, type QuotaLimits } from '../../domain/scheduling/quota.js';
import { claimNodes } from './claim-nodes.js';
import { heldWindows } from './held-windows.js';
import { insertEvents } from './insert-events.js';
import { tstzRange } from './ranges.js';
import { subleaseParents } from './sublease-parents.js';

/**
 * Books a lease in one transaction: the lease, its allocations (the exclusion constraint over
 * (node_id, blocked) refuses any overlap, on any number of replicas: 23P01 → lease_conflict), one start and one
 * end task per allocation for the engine, and the audit events. The project's node quota is checked inside,
 * under a per-project advisory lock, so two concurrent requests cannot both squeeze under it.
 */
export async function createLease(db: Kysely<Database>, input: NewLease, events: readonly NewAuditEvent[], now: Date): Promise<Lease> {
  return db.transaction().execute(async (trx) => {
    let chosen = input.allocations;
    // Nodes a sub-offer open to the project covers for the whole window are taken as sub-leases (subleasing.ts).
    const parents = await subleaseParents(trx, [...new Set([...input.allocations.map((a) => a.node_id), ...(input.alternatives ?? []).flat()])], input.project_id, input.start, input.end);
    if (input.alternatives) chosen = await claimNodes(trx, input, input.alternatives, new Set(parents.keys()));
    else await lockNodes(trx, input.allocations.map((a) => a.node_id));
    const limits = { max_nodes: input.max_nodes, max_node_hours: input.max_node_hours ?? null };
    if (limits.max_nodes !== null || limits.max_node_hours !== null) await checkNodeQuotaLocked(trx, input.project_id, limits, input, chosen.length);
    const lease = await trx
      .insertInto('leases')
      .values({
        name: input.name,
        project_id: input.project_id,
        created_by: input.created_by,
        start_at: input.start,
        end_at: input.end,
        state: 'pending',
        request: JSON.stringify(input.request),
        ...(input.replace_policy ? { replace_policy: input.replace_policy } : {}),
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const blockedUntil = new Date(input.end.getTime() + input.cleaning_gap_ms);
    const allocations = await trx
      .insertInto('allocations')
      .values(
        chosen.map((a) => {
          const parent = parents.get(a.node_id);
          return {
            lease_id: lease.id,
            node_id: a.node_id,
            group_index: a.group_index,
            state: 'reserved',
            period: tstzRange(input.start, input.end),
            // No cleaning after a sub-lease: the node goes back to the lessee that offered it, not to the pool.
            blocked: tstzRange(input.start, parent ? input.end : blockedUntil),
            parent_allocation_id: parent?.parent_allocation_id ?? null,
            updated_at: now,
          };
        }),
      )
      .returning(['id'])
      .execute();
    const subleased = chosen.flatMap((a) => (parents.has(a.node_id) ? [parents.get(a.node_id)!] : []));
    const actor = events[0]?.actor ?? 'engine';
    const window = { start: input.start.toISOString(), end: input.end.toISOString() };
    const subEvents: NewAuditEvent[] = subleased.map((p) => ({
      type: 'lease.subleased',
      actor,
      actor_user_id: events[0]?.actor_user_id ?? null,
      lease_id: p.parent_lease_id,
      project_id: p.parent_project_id,
      node_id: p.node_id,
      message: `node ${p.node_id} sub-leased to project ${input.project_id} from ${window.start} to ${window.end}`,
      details: { sublease_id: lease.id, sublessee: input.project_id, ...window },
    }));
    await trx
      .insertInto('lease_tasks')
      .values(
        allocations.flatMap((a) => [
          { lease_id: lease.id, allocation_id: a.id, kind: 'start', due_at: input.start, created_at: now },
          { lease_id: lease.id, allocation_id: a.id, kind: 'end', due_at: input.end, created_at: now },
        ]),
      )
      .execute();
    await insertEvents(trx, [...events.map((e) => ({ ...e, lease_id: e.lease_id ?? lease.id })), ...subEvents], now);
    const [loaded] = await loadLeases(trx, [lease]);
    return loaded!;
  });
}

/**
 * Serialises bookings of the same nodes, in sorted order. Without it, two transactions inserting allocations the
 * exclusion constraint compares can each wait for the other's uncommitted row: a deadlock PostgreSQL breaks only
 * after deadlock_timeout (1 s), one pair at a time — measured as multi-second stalls with 64 concurrent clients.
 */
export async function lockNodes(trx: Transaction<Database>, nodeIds: readonly string[]): Promise<void> {
  const sorted = [...new Set(nodeIds)].sort();
  if (sorted.length === 0) return;
  await sql`select pg_advisory_xact_lock(hashtext('leasehold.node:' || id)::bigint)
    from unnest(${sorted}::text[]) with ordinality as t(id, n) order by n`.execute(trx);
}

/**
 * The node quota under a per-project advisory lock, so two concurrent changes (creates, extensions) cannot both
 * squeeze under it: the same rule as the planner's (domain/scheduling/quota.ts), re-checked where it is final.
 */
export async function checkNodeQuotaLocked(
  trx: Transaction<Database>,
  projectId: string,
  limits: QuotaLimits,
  window: { readonly start: Date; readonly end: Date },
  nodes: number,
  exceptLeaseId?: string,
): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`leasehold.quota:${projectId}`})::bigint)`.execute(trx);
  const ask = { start: window.start.getTime(), end: window.end.getTime() };
  const span = quotaSpan(limits, ask) ?? ask;
  const held = await heldWindows(trx, projectId, new Date(span.start), new Date(span.end), exceptLeaseId);
  // Only the node rules: max_lease_duration was the planner's (an extension's length is checked there).
  checkQuota({ max_nodes: limits.max_nodes ?? null, max_node_hours: limits.max_node_hours ?? null }, { window: ask, nodes, held });
}
