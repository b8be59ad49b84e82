import { sql, type Kysely } from 'kysely';
import type { Database } from '../database.js';
import type { NodeStateCount } from '../stats-store.js';

/** Live nodes by provision state and quarantine: one grouped count (metrics, at scrape time). */
export async function nodeStateCounts(db: Kysely<Database>): Promise<readonly NodeStateCount[]> {
  const rows = await db
    .selectFrom('nodes')
    .select(['provision_state', sql<boolean>`quarantined_at is not null`.as('quarantined'), sql<string>`count(*)`.as('n')])
    .where('removed_at', 'is', null)
    .groupBy(['provision_state', sql`quarantined_at is not null`])
    .orderBy('provision_state')
    .orderBy(sql`quarantined_at is not null`)
    .execute();
  return rows.map((r) => ({ provision_state: r.provision_state, quarantined: r.quarantined, count: Number(r.n) }));
}
