import { sql, type Kysely } from 'kysely';
import type { Database } from '../database.js';

/**
 * When the engine should look again: the earliest time any unfinished task can next be claimed. A task claimed
 * by a live worker counts from its claim's expiry (greatest(due_at, locked_until)): if that worker dies, that is
 * when another picks it up; if it finishes, the task is done or re-scheduled before then. Without this, a task
 * claimed elsewhere and due in the past would wake this replica in a loop.
 */
export async function nextDueAt(db: Kysely<Database>): Promise<Date | null> {
  const row = await db
    .selectFrom('lease_tasks')
    .select(sql<Date | null>`min(greatest(due_at, coalesce(locked_until, due_at)))`.as('next'))
    .where('done_at', 'is', null)
    .executeTakeFirst();
  return row?.next ?? null;
}
