import { sql, type Kysely } from 'kysely';
import { formatDuration } from '../../domain/duration.js';
import type { NewAuditEvent } from '../../domain/leasing.js';
import { dueNotices, formatEndsIn } from '../../domain/notices.js';
import type { Database } from '../database.js';
import { insertEvents } from './insert-events.js';

/** Leases in these states may still hear of their end; an ending, ended, cancelled or failed one never does. */
const RUNNING = ['pending', 'active'];

/**
 * Sends every notice due at `now` (domain/notices.ts says which), each once per lease, offset and end: the
 * `lease_notices` row and the `lease.ending_soon` event (with its webhook, insert-events.ts) are written in one
 * transaction, and the rows' primary key refuses a second one, so two engines or a restart never send a notice
 * twice. Leases are locked with SKIP LOCKED: one whose end is being changed right now is looked at on the next
 * pass (after the change, with its new end), and two engines never wait on each other. Resolves to the number of
 * events written.
 */
export async function sendDueNotices(db: Kysely<Database>, now: Date, defaultOffsetsMs: readonly number[]): Promise<number> {
  return db.transaction().execute(async (trx) => {
    // How far ahead any lease could have a notice due: the longest offset of the default and of every project.
    const custom = await trx.selectFrom('projects').select('notice_offsets_ms').where('notice_offsets_ms', 'is not', null).execute();
    const horizon = Math.max(0, ...defaultOffsetsMs, ...custom.flatMap((p) => ((p.notice_offsets_ms as number[] | null) ?? []).map(Number)));
    if (horizon === 0) return 0;
    const leases = await trx
      .selectFrom('leases as l')
      .innerJoin('projects as p', 'p.id', 'l.project_id')
      .select(['l.id', 'l.project_id', 'l.start_at', 'l.end_at', 'p.notice_offsets_ms'])
      .where('l.state', 'in', RUNNING)
      .where('l.start_at', '<=', now)
      .where('l.end_at', '>', now)
      .where('l.end_at', '<=', new Date(now.getTime() + horizon))
      .orderBy('l.end_at')
      .limit(1000)
      .forUpdate('l')
      .skipLocked()
      .execute();
    if (leases.length === 0) return 0;
    const sent = await sentFor(trx, leases.map((l) => ({ id: l.id, end: l.end_at })));
    const rows: { lease_id: string; offset_ms: number; end_at: Date; sent_at: Date; announced: boolean }[] = [];
    const events: NewAuditEvent[] = [];
    for (const l of leases) {
      const offsets = l.notice_offsets_ms === null ? defaultOffsetsMs : (l.notice_offsets_ms as number[]).map(Number);
      const due = dueNotices({ start: l.start_at, end: l.end_at }, offsets, new Set(sent.get(l.id)?.keys() ?? []), now);
      if (!due) continue;
      for (const o of due.offsets) rows.push({ lease_id: l.id, offset_ms: o, end_at: l.end_at, sent_at: now, announced: o === due.announce });
      const left = l.end_at.getTime() - now.getTime();
      events.push({
        type: 'lease.ending_soon',
        actor: 'engine',
        lease_id: l.id,
        project_id: l.project_id,
        message: `ends at ${l.end_at.toISOString()} (in ${formatEndsIn(left)})`,
        details: { end: l.end_at.toISOString(), offset: formatDuration(due.announce), ends_in: formatDuration(Math.max(0, Math.round(left / 1000) * 1000)), covers: due.offsets.map(formatDuration) },
      });
    }
    if (rows.length === 0) return 0;
    const inserted = await trx
      .insertInto('lease_notices')
      .values(rows)
      .onConflict((oc) => oc.columns(['lease_id', 'offset_ms', 'end_at']).doNothing())
      .returning(['lease_id'])
      .execute();
    // Only the leases whose rows this transaction wrote are announced (a row that was there already was sent).
    const fresh = new Set(inserted.map((r) => r.lease_id));
    const announce = events.filter((e) => fresh.has(e.lease_id!));
    await insertEvents(trx, announce, now);
    return announce.length;
  });
}

/** Per lease, the notices sent for its current end: offset → when. */
export async function sentFor(db: Kysely<Database>, leases: readonly { readonly id: string; readonly end: Date }[]): Promise<Map<string, Map<number, Date>>> {
  const out = new Map<string, Map<number, Date>>();
  if (leases.length === 0) return out;
  const rows = await db
    .selectFrom('lease_notices')
    .select(['lease_id', 'offset_ms', 'end_at', 'sent_at'])
    .where('lease_id', 'in', leases.map((l) => l.id))
    .execute();
  const ends = new Map(leases.map((l) => [l.id, l.end.getTime()]));
  for (const r of rows) {
    if (r.end_at.getTime() !== ends.get(r.lease_id)) continue;
    const map = out.get(r.lease_id) ?? new Map<number, Date>();
    map.set(Number(r.offset_ms), r.sent_at);
    out.set(r.lease_id, map);
  }
  return out;
}

/**
 * Forgets the notices of every other end of a lease (called in the transaction that moves its end): moved back to
 * an end it had before, the lease hears of it again.
 */
export async function forgetOtherEnds(db: Kysely<Database>, leaseId: string, end: Date): Promise<void> {
  await db.deleteFrom('lease_notices').where('lease_id', '=', leaseId).where(sql`end_at`, '<>', end).execute();
}
