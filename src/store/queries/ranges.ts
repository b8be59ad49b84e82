import { sql, type RawBuilder } from 'kysely';

/**
 * A half-open `tstzrange` [from, to) — how every window is written (allocations' `period` and `blocked`, offers'
 * `period`) and compared (`&&`, `@>`). `to: null` is open-ended. An end may be SQL (`lower(period)` stays put).
 */
export function tstzRange(from: Date | RawBuilder<unknown>, to: Date | RawBuilder<unknown> | null): RawBuilder<unknown> {
  const edge = (v: Date | RawBuilder<unknown> | null) => (v instanceof Date || v === null ? sql`${v}::timestamptz` : v);
  return sql`tstzrange(${edge(from)}, ${edge(to)}, '[)')`;
}
