import { sql, type Kysely } from 'kysely';
import type { Database } from '../database.js';

/**
 * Takes or renews the named leader lease for `holder` until `now + ttlMs`, when it is free, expired, or already
 * this holder's; resolves to whether `holder` holds it now. One statement (insert … on conflict … where), so two
 * replicas asking at once never both win.
 */
export async function tryLeaderLease(db: Kysely<Database>, name: string, holder: string, now: Date, ttlMs: number): Promise<boolean> {
  const until = new Date(now.getTime() + ttlMs);
  const { rows } = await sql<{ holder: string }>`
    insert into leader_leases (name, holder, until) values (${name}, ${holder}, ${until})
    on conflict (name) do update set holder = excluded.holder, until = excluded.until
     where leader_leases.until <= ${now} or leader_leases.holder = excluded.holder
    returning holder`.execute(db);
  return rows.length === 1;
}

/** Gives the lease up (at shutdown), so another replica takes over at once instead of after the ttl. */
export async function dropLeaderLease(db: Kysely<Database>, name: string, holder: string): Promise<void> {
  await db.deleteFrom('leader_leases').where('name', '=', name).where('holder', '=', holder).execute();
}
