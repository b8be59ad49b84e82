import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../database.js';
import type { LeaseTask, TaskLane } from '../engine-store.js';
import { FINAL_STATES_SQL } from './node-view-query.js';

/** How many more due tasks than it claims the mark queue looks at to take turns between leases. */
const FAIR_WINDOW = 20;

interface TaskRow {
  id: string;
  lease_id: string;
  allocation_id: string | null;
  kind: string;
  due_at: Date;
  attempts: number;
  last_error: string | null;
}

/**
 * True for a task `t` (joined to its allocation as `a`) that must wait for other work at `now` (see
 * claimDueTasks); shared with nextDueAt, so a blocked task does not wake the engine over and over.
 */
export function taskIsBlocked(now: Date | null): RawBuilder<boolean> {
  // Without a time (nextDueAt), a quarantine holds a start back whatever its window.
  const beforeEnd = now === null ? sql`true` : sql`upper(a.period) > ${now}`;
  return sql<boolean>`(
    (t.kind = 'end' and exists (
      select 1 from lease_tasks s
       where s.allocation_id = t.allocation_id and s.kind = 'start' and s.done_at is null))
    or (t.kind = 'start' and a.id is not null and (
      exists (
        select 1 from allocations p
         where p.node_id = a.node_id
           and p.id <> a.id
           -- A sub-lease starts inside its parent's hold: the parent is not in its way (subleasing.ts).
           and p.id is distinct from a.parent_allocation_id
           and p.holds
           and p.state not in (${FINAL_STATES_SQL})
           and lower(p.period) < lower(a.period))
      or (${beforeEnd} and exists (
        select 1 from nodes n where n.id = a.node_id and n.quarantined_at is not null)))))`;
}

/**
 * Claims up to `limit` due tasks for `worker` until `now + claimMs`, in one statement: the inner SELECT locks
 * the rows it picks FOR UPDATE SKIP LOCKED, so two workers claiming at the same moment never pick one task, and
 * a worker arriving after the first committed re-checks the row and sees the live claim.
 *
 * Besides being due and unclaimed (or claimed by a worker whose claim expired), a task is held back while the
 * work it depends on is unfinished, so one node never has two tasks running against it:
 * - an `end` task waits for its allocation's `start` task (a lease that ended before the engine got to its
 *   start: the start completes without handing the node over, then the end runs);
 * - a `start` task waits while an earlier allocation on the same node still holds it unfinished (its end task
 *   is still cleaning the node: the next lessee never receives a node that has not been wiped), and, until the
 *   allocation's own end, while the node is quarantined.
 */
export async function claimDueTasks(
  db: Kysely<Database>,
  worker: string,
  now: Date,
  limit: number,
  claimMs: number,
  lane: TaskLane | null = null,
): Promise<LeaseTask[]> {
  const until = new Date(now.getTime() + claimMs);
  // Ironic's lessee mark (a start, or an end's first step) or the rest of a release (engine-store.ts, TaskLane).
  const marks = sql<boolean>`(t.kind = 'start' or a.state is distinct from 'releasing' or coalesce(a.step, 'clear_lessee') = 'clear_lessee')`;
  const inLane = lane === null ? sql<boolean>`true` : lane === 'mark' ? marks : sql<boolean>`not ${marks}`;
  // Among the earliest due tasks (FAIR_WINDOW times as many as claimed, read in due order through the index),
  // each lease's first before any lease's second: a small lease starting while a large one is handed over is not
  // queued behind all of it. FOR UPDATE cannot sit beside a window function, hence the CTEs; the outer conditions
  // are checked again on the locked row (a claim committed meanwhile by another worker is skipped). Releases,
  // which wait on the hardware anyway, go by due time alone.
  const { rows } = await sql<TaskRow>`
    with due as (
      select t.id, t.lease_id, t.due_at
        from lease_tasks t
        left join allocations a on a.id = t.allocation_id
       where t.done_at is null
         and t.due_at <= ${now}
         and (t.locked_until is null or t.locked_until <= ${now})
         and ${inLane}
         and not ${taskIsBlocked(now)}
       order by t.due_at, t.id
       limit ${limit * (lane === 'release' ? 4 : FAIR_WINDOW)}
    ), turns as (
      select id, due_at, row_number() over (partition by lease_id order by due_at, id) as turn from due)
    update lease_tasks
       set locked_by = ${worker}, locked_until = ${until}
     where id in (
       select t.id
         from lease_tasks t
         join turns on turns.id = t.id
        where t.done_at is null
          and (t.locked_until is null or t.locked_until <= ${now})
        order by turns.turn, turns.due_at, t.id
        limit ${limit}
          for update of t skip locked)
    returning id, lease_id, allocation_id, kind, due_at, attempts, last_error`.execute(db);
  return inTurns(rows.map(toLeaseTask));
}

/**
 * The claimed tasks in the order their hardware calls should go (the engine starts them in this order and their
 * calls wait in line by it: semaphore.ts): the leases with the fewest tasks in the batch first, each lease's tasks in
 * turn among leases of the same size, then by due time. Sorted by due time alone, a 4-node lease starting beside a
 * 200-node one had its tasks scattered among the 48 claimed (ids are random) and waited 4 s for its lessees; taking
 * turns, its fourth lessee still came eighth (558 ms). Fewest first, it comes fourth: the large lease is later by
 * four calls (≈ 0.1 s of Ironic's ≈ 35 PATCHes a second), which its hundreds of calls do not notice.
 */
function inTurns(tasks: readonly LeaseTask[]): LeaseTask[] {
  const byTime = (a: LeaseTask, b: LeaseTask) => a.due_at.getTime() - b.due_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const turn = new Map<string, number>();
  const size = new Map<string, number>();
  for (const task of [...tasks].sort(byTime)) {
    const n = (size.get(task.lease_id) ?? 0) + 1;
    size.set(task.lease_id, n);
    turn.set(task.id, n);
  }
  return [...tasks].sort((a, b) => size.get(a.lease_id)! - size.get(b.lease_id)! || turn.get(a.id)! - turn.get(b.id)! || byTime(a, b));
}

function toLeaseTask(row: TaskRow): LeaseTask {
  return {
    id: row.id,
    lease_id: row.lease_id,
    // Tasks are written per allocation; a lease-level task (none exist yet) has no allocation to act on.
    allocation_id: row.allocation_id ?? '',
    kind: row.kind === 'end' ? 'end' : 'start',
    due_at: row.due_at,
    attempts: row.attempts,
    last_error: row.last_error,
  };
}
