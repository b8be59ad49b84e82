import { sql, type Kysely } from 'kysely';
import type { NewAuditEvent } from '../../domain/leasing.js';
import type { Database } from '../database.js';
import type { AllocationWrite, AllocationWriteResult } from '../engine-store.js';
import { insertEvents } from './insert-events.js';
import { leaseTransitions, roundsByKey, type SiblingState } from './engine-lease-transitions.js';

/**
 * Writes many allocations' progress in one transaction of a fixed number of statements, whatever their number
 * (issue 15: a release was ≈ 40 statements, 1,000 releases ≈ 40,000):
 *
 * 1. the leases of the allocations locked, in id order (two replicas' batches sharing leases wait for each other
 *    instead of deadlocking); they are read with their allocations' states in the same statement;
 * 2. the fence: the task rows of the writes made under a claim locked, in id order, where that worker still
 *    holds the claim. A write whose claim was lost is not written (its result says so); the others are. A
 *    takeover, whose claim skips locked rows, happens wholly before or wholly after this transaction;
 * 3. one UPDATE ... FROM jsonb_to_recordset per round (a round: no allocation twice), returning each node's owner;
 * 4. the leases whose derived state changed, in one UPDATE; every event (the writes' own, then each lease's
 *    `lease.<state>` right after the write that caused it, as one transaction per write gave) in one INSERT.
 *
 * Results come back in the writes' order. Ids must be UUIDs (the caller checks).
 */
export async function updateAllocations(
  db: Kysely<Database>,
  writes: readonly AllocationWrite[],
  now: Date,
): Promise<AllocationWriteResult[]> {
  if (writes.length === 0) return [];
  return db.transaction().execute(async (trx) => {
    const ids = [...new Set(writes.map((w) => w.id))];
    const { rows: found } = await sql<{ lease_id: string; project_id: string; lease_state: string; siblings: SiblingState[] }>`
      select l.id as lease_id, l.project_id, l.state as lease_state,
        (select coalesce(json_agg(json_build_object('id', s.id, 'lease_id', s.lease_id, 'state', s.state, 'counts', s.leave_reason is null)), '[]')
           from allocations s where s.lease_id = l.id) as siblings
        from leases l
       where l.id in (select lease_id from allocations where id = any(${ids}::uuid[]))
       order by l.id
         for update of l`.execute(trx);
    const leases = new Map(found.map((l) => [l.lease_id, l]));
    const siblings = found.flatMap((l) => l.siblings);
    const known = new Set(siblings.map((s) => s.id));

    const claims = writes.flatMap((w) => (w.claim ? [{ task_id: w.claim.taskId, worker: w.claim.worker }] : []));
    const held = new Set<string>();
    if (claims.length > 0) {
      const { rows } = await sql<{ id: string; worker: string }>`
        select t.id, t.locked_by as worker
          from lease_tasks t
          join jsonb_to_recordset(${JSON.stringify(claims)}::jsonb) as c(task_id uuid, worker text)
            on t.id = c.task_id and t.locked_by = c.worker
         where t.done_at is null
         order by t.id
           for update of t`.execute(trx);
      for (const row of rows) held.add(`${row.id} ${row.worker}`);
    }

    const results: AllocationWriteResult[] = writes.map((w) =>
      !known.has(w.id) ? 'not_found' : w.claim && !held.has(`${w.claim.taskId} ${w.claim.worker}`) ? 'claim_lost' : 'written',
    );
    const written = writes.filter((_, i) => results[i] === 'written');
    if (written.length === 0) return results;

    const nodes = new Map<string, { node_id: string; owner_project_id: string | null }>();
    for (const round of roundsByKey(written, (w) => w.id)) {
      const { rows } = await sql<{ id: string; node_id: string; owner_project_id: string | null }>`
        update allocations a set
          updated_at = v.at,
          state = case when v.p ? 'state' then v.p->>'state' else a.state end,
          step = case when v.p ? 'step' then v.p->>'step' else a.step end,
          last_error = case when v.p ? 'last_error' then v.p->>'last_error' else a.last_error end,
          node_maintenance_at = case when v.p ? 'node_maintenance_at' then (v.p->>'node_maintenance_at')::timestamptz
                                     else a.node_maintenance_at end
          from jsonb_to_recordset(${JSON.stringify(round.map((w) => ({ id: w.id, at: w.at.toISOString(), p: patchJson(w) })))}::jsonb)
            as v(id uuid, at timestamptz, p jsonb)
         where a.id = v.id
        returning a.id, a.node_id,
          (select coalesce(by_id.id, by_name.id) from nodes n
             left join projects by_id on by_id.id = n.owner
             left join projects by_name on by_name.name = n.owner
            where n.id = a.node_id) as owner_project_id`.execute(trx);
      for (const row of rows) nodes.set(row.id, row);
    }

    const { transitions, finalStates } = leaseTransitions(
      new Map(found.map((l) => [l.lease_id, l.lease_state])),
      siblings,
      written.map((w) => ({ allocation_id: w.id, state: w.patch.state })),
    );
    if (finalStates.size > 0) {
      await sql`
        update leases l set state = v.state, updated_at = ${now}
          from jsonb_to_recordset(${JSON.stringify([...finalStates].map(([id, state]) => ({ id, state })))}::jsonb) as v(id uuid, state text)
         where l.id = v.id`.execute(trx);
    }

    const leaseOf = new Map(siblings.map((s) => [s.id, s.lease_id]));
    const causedBy = new Map<number, (typeof transitions)[number][]>();
    for (const t of transitions) causedBy.set(t.index, [...(causedBy.get(t.index) ?? []), t]);
    const events: NewAuditEvent[] = [];
    written.forEach((w, index) => {
      const lease = leases.get(leaseOf.get(w.id)!)!;
      const node = nodes.get(w.id)!;
      // What the engine knows about every event of this allocation; an event's own fields win.
      const withDefaults = (e: NewAuditEvent): NewAuditEvent => ({
        ...e,
        actor: e.actor_user_id ? e.actor : 'engine',
        node_id: e.node_id !== undefined ? e.node_id : node.node_id,
        lease_id: e.lease_id !== undefined ? e.lease_id : lease.lease_id,
        project_id: e.project_id !== undefined ? e.project_id : lease.project_id,
        owner_project_id: e.owner_project_id !== undefined ? e.owner_project_id : node.owner_project_id,
      });
      events.push(...w.events.map(withDefaults));
      for (const t of causedBy.get(index) ?? []) {
        events.push(
          withDefaults({
            type: `lease.${t.to}`,
            actor: 'engine',
            outcome: t.to === 'failed' ? 'error' : 'ok',
            // About the whole lease: not tied to this node or its owner.
            node_id: null,
            owner_project_id: null,
            message: `lease is ${t.to}`,
            details: { from: t.from, to: t.to },
          }),
        );
      }
    });
    await insertEvents(trx, events, now);
    return results;
  });
}

/** The patch as JSON: only the fields it sets, so the statement leaves the others alone (null clears). */
function patchJson(write: AllocationWrite): Record<string, unknown> {
  const { patch } = write;
  return {
    ...(patch.state !== undefined && { state: patch.state }),
    ...(patch.step !== undefined && { step: patch.step }),
    ...(patch.last_error !== undefined && { last_error: patch.last_error }),
    ...(patch.node_maintenance_at !== undefined && {
      node_maintenance_at: patch.node_maintenance_at === null ? null : patch.node_maintenance_at.toISOString(),
    }),
  };
}
