import { sql, type Kysely, type SqlBool } from 'kysely';
import type { Database } from '../database.js';

/** The node's owner (an Ironic project id or name) resolved to a Leasehold project id, or null. */
export async function nodeOwnerProject(db: Kysely<Database>, nodeId: string): Promise<string | null> {
  const row = await db
    .selectFrom('nodes as n')
    .leftJoin('projects as by_id', (join) => join.on(sql<SqlBool>`by_id.id::text = n.owner`))
    .leftJoin('projects as by_name', (join) => join.on(sql<SqlBool>`by_name.name = n.owner`))
    .select(sql<string | null>`coalesce(by_id.id, by_name.id)`.as('owner_project_id'))
    .where('n.id', '=', nodeId)
    .executeTakeFirst();
  return row?.owner_project_id ?? null;
}
