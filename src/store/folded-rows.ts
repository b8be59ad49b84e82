import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { Database } from './database.js';

/**
 * The rows of `ordered` (a page: ordered and limited) folded by the database into ONE JSON text and split again
 * here, in `orderBy`'s order, with the `dates` columns made Dates again (JSON gives instants as ISO 8601 text with
 * their offset). For PGlite, whose result parser slices and decodes every field of every row: a page of 1,000
 * offers is 22,000 fields, one text is one JSON.parse (issue 15). Columns must be what JSON carries as is: text,
 * numbers (bigint below 2^53), booleans, arrays, JSON.
 */
export async function foldedRows<O>(
  db: Kysely<Database>,
  ordered: SelectQueryBuilder<any, any, O>,
  orderBy: RawBuilder<unknown>,
  dates: readonly (keyof O & string)[],
): Promise<O[]> {
  const { rows } = await sql<{ page: string | null }>`select json_agg(p order by ${orderBy})::text as page from (${ordered}) as p`.execute(db);
  const page = rows[0]?.page;
  if (!page) return [];
  const items = JSON.parse(page) as Record<string, unknown>[];
  for (const item of items) {
    for (const key of dates) {
      const value = item[key];
      if (typeof value === 'string') item[key] = instant(value);
    }
  }
  return items as O[];
}

/** A timestamptz as JSON gives it (ISO 8601 with its offset, or ±infinity) as a Date. */
export function instant(text: string): Date {
  if (text === 'infinity') return new Date(8.64e15);
  if (text === '-infinity') return new Date(-8.64e15);
  return new Date(text);
}
