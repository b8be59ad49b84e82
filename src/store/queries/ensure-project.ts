import { sql, type Kysely } from 'kysely';
import type { Database } from '../database.js';

/**
 * The row of a project another identity service owns (Keystone), made on first sight and kept named as there: by
 * its id, with its name, or — when a project elsewhere (another Keystone domain) already has that name here — the
 * name followed by its id, so both stay addressable. Returns the row's id and name.
 */
export async function ensureProject(db: Kysely<Database>, id: string, name: string, now: Date): Promise<{ id: string; name: string }> {
  const taken = await db.selectFrom('projects').select('id').where('name', '=', name).where('id', '<>', id).executeTakeFirst();
  const wanted = taken ? `${name} (${id})` : name;
  const { rows } = await sql<{ id: string; name: string }>`
    insert into projects (id, name, created_at, updated_at) values (${id}, ${wanted}, ${now}, ${now})
    on conflict (id) do update set name = excluded.name, updated_at = excluded.updated_at
     where projects.name <> excluded.name
    returning id, name`.execute(db);
  return rows[0] ?? { id, name: wanted };
}
