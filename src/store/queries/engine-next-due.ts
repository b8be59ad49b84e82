import { sql, type Kysely } from 'kysely';
import type { Database } from '../database.js';
import { taskIsBlocked } from './engine-claim-due-tasks.js';

/**
 * When the engine should look again: the earliest time an unfinished task can next be claimed.
 * - A task claimed by a live worker counts from its claim's expiry (greatest(due_at, locked_until)): if that
 *   worker dies, that is when another picks it up; if it finishes, the task is done or re-scheduled before then.
 * - A task waiting for other work (an end for its start, a start for the node's previous release) does not
 *   count: the work it waits for does, and the engine that finishes it claims again at once. A start held back
 *   by a quarantine is found by the periodic re-check once the quarantine is cleared or the lease is over.
 * Without these, a task due in the past but not claimable would wake every replica in a loop.
 */
export async function nextDueAt(db: Kysely<Database>): Promise<Date | null> {
  const { rows } = await sql<{ next: Date | null }>`
    select min(greatest(t.due_at, coalesce(t.locked_until, t.due_at))) as next
      from lease_tasks t
      left join allocations a on a.id = t.allocation_id
     where t.done_at is null
       and not ${taskIsBlocked(null)}`.execute(db);
  return rows[0]?.next ?? null;
}
