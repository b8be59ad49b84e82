import { sql, type Kysely } from 'kysely';
import type { Database } from '../database.js';
import type { TaskSettlement } from '../engine-store.js';
import { roundsByKey } from './engine-lease-transitions.js';

/**
 * Completes or re-schedules many tasks in one statement (per round: no task twice), each releasing its claim. A
 * settlement with `claimedBy` changes its task only while that worker holds the claim, and none changes a task
 * that is done: a worker whose claim was taken over cannot complete or reopen another's work. Resolves, in the
 * settlements' order, to whether each changed its task. Ids must be UUIDs (the caller checks).
 */
export async function settleTasks(db: Kysely<Database>, settlements: readonly TaskSettlement[], now: Date): Promise<boolean[]> {
  const changed = new Map<TaskSettlement, boolean>();
  for (const round of roundsByKey(settlements, (s) => s.id)) {
    const list = round.map((s) => ({
      id: s.id,
      done: s.outcome.kind === 'done',
      due_at: s.outcome.kind === 'retry' ? s.outcome.dueAt.toISOString() : null,
      error: s.outcome.kind === 'retry' ? s.outcome.error : null,
      worker: s.claimedBy ?? null,
    }));
    const { rows } = await sql<{ id: string }>`
      update lease_tasks t set
        done_at = case when v.done then ${now}::timestamptz else t.done_at end,
        due_at = case when v.done then t.due_at else v.due_at end,
        attempts = case when v.done then t.attempts else t.attempts + 1 end,
        last_error = case when v.done then t.last_error else v.error end,
        locked_by = null,
        locked_until = null
        from jsonb_to_recordset(${JSON.stringify(list)}::jsonb) as v(id uuid, done boolean, due_at timestamptz, error text, worker text)
       where t.id = v.id
         and t.done_at is null
         and (v.worker is null or t.locked_by = v.worker)
      returning t.id`.execute(db);
    const ids = new Set(rows.map((r) => r.id));
    for (const s of round) changed.set(s, ids.has(s.id));
  }
  return settlements.map((s) => changed.get(s) ?? false);
}
