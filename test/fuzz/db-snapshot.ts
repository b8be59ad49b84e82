import { sql, type Kysely } from 'kysely';
import type { Store } from '../../src/store/store.js';

/** Per table: its row count and a digest of every row, so any insert, update or delete shows. */
export type DbSnapshot = Readonly<Record<string, { readonly rows: number; readonly digest: string }>>;

/**
 * Everything in the store's tables, read through the store's own Kysely handle (KyselyStore keeps it in `db`).
 * Comparing two snapshots proves a request wrote nothing: no row added, removed or changed, no event appended.
 */
export async function dbSnapshot(store: Store): Promise<DbSnapshot> {
  const db = (store as unknown as { readonly db: Kysely<unknown> }).db;
  if (!db) throw new Error('dbSnapshot needs a KyselyStore (its `db`)');
  const tables = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`.execute(db);
  const out: Record<string, { rows: number; digest: string }> = {};
  for (const { name } of tables.rows) {
    const { rows } = await sql<{ rows: string; digest: string }>`
      select count(*)::text as rows, md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest
      from ${sql.table(name)} t`.execute(db);
    out[name] = { rows: Number(rows[0]!.rows), digest: rows[0]!.digest };
  }
  return out;
}
