import { sql, type Kysely } from 'kysely';
import { AdvisoryLock } from '../advisory-locks.js';
import type { Database } from '../database.js';
import type { NodeRecord, SyncResult } from '../store.js';
import { sameNode } from './same-node.js';
import { upsertNodes } from './upsert-nodes.js';

const IDS_PER_STATEMENT = 1000;

/**
 * Makes the stored inventory equal to the driver's full list, in one transaction. Replicas syncing at once
 * queue on an advisory lock, so each compares against the other's committed result and the counts stay true.
 * A removed node that is listed again counts as added (it reappears for readers).
 */
export async function syncNodes(db: Kysely<Database>, records: readonly NodeRecord[], now: Date): Promise<SyncResult> {
  // A driver listing one node twice would make one upsert statement touch a row twice; the last entry wins.
  const incoming = new Map(records.map((record) => [record.id, record]));
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${AdvisoryLock.SyncNodes}::bigint)`.execute(trx);
    const stored = new Map((await trx.selectFrom('nodes').selectAll().execute()).map((row) => [row.id, row]));

    let added = 0;
    let updated = 0;
    const toWrite: NodeRecord[] = [];
    const unchanged: string[] = [];
    for (const record of incoming.values()) {
      const row = stored.get(record.id);
      if (!row || row.removed_at !== null) added++;
      else if (sameNode(row, record)) {
        unchanged.push(record.id);
        continue;
      } else updated++;
      toWrite.push(record);
    }
    const removed = [...stored.values()].filter((row) => row.removed_at === null && !incoming.has(row.id)).map((row) => row.id);

    await upsertNodes(trx, toWrite, now);
    // Unchanged rows were still seen just now; synced_at says when the driver last vouched for a row.
    for (const ids of chunks(unchanged)) {
      await trx.updateTable('nodes').set({ synced_at: now }).where('id', 'in', ids).execute();
    }
    for (const ids of chunks(removed)) {
      await trx.updateTable('nodes').set({ removed_at: now }).where('id', 'in', ids).execute();
    }
    return { added, updated, removed: removed.length, unchanged: unchanged.length };
  });
}

function* chunks(ids: readonly string[]): Generator<string[]> {
  for (let start = 0; start < ids.length; start += IDS_PER_STATEMENT) yield ids.slice(start, start + IDS_PER_STATEMENT);
}
