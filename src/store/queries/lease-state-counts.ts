import { sql, type Kysely } from 'kysely';
import type { Database } from '../database.js';

/** Leases by state: one grouped count (metrics, at scrape time). */
export async function leaseStateCounts(db: Kysely<Database>): Promise<ReadonlyMap<string, number>> {
  const rows = await db.selectFrom('leases').select(['state', sql<string>`count(*)`.as('n')]).groupBy('state').execute();
  // count(*) is a bigint: pg hands it over as text.
  return new Map(rows.map((r) => [r.state, Number(r.n)]));
}
