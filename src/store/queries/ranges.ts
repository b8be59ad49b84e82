import { sql, type RawBuilder, type SqlBool } from 'kysely';

/**
 * A half-open `tstzrange` [from, to) — how every window is written (allocations' `period` and `blocked`, offers'
 * `period`) and compared (`&&`, `@>`). `to: null` is open-ended. An end may be SQL (`lower(period)` stays put).
 */
export function tstzRange(from: Date | RawBuilder<unknown>, to: Date | RawBuilder<unknown> | null): RawBuilder<unknown> {
  const edge = (v: Date | RawBuilder<unknown> | null) => (v instanceof Date || v === null ? sql`${v}::timestamptz` : v);
  return sql`tstzrange(${edge(from)}, ${edge(to)}, '[)')`;
}

/**
 * `column` is one of `values`, sent as one array parameter: lists of a page's 1,000 nodes as `IN ($1, …, $1000)`
 * cost more to send, parse and plan than the rows they found (a whole node list of 10,000 took 1.3 s on PGlite).
 */
export function inList(column: string, values: readonly string[]): RawBuilder<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} = any(${[...values]}::text[])`;
}
