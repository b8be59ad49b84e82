import { createHash } from 'node:crypto';
import { sql, type Compilable, type Kysely } from 'kysely';
import type { Database } from './database.js';

/** SQLSTATE 26000: "prepared statement ... does not exist" (a connection that has not prepared it yet). */
const NOT_PREPARED = '26000';
/** SQLSTATE 42P05: "prepared statement ... already exists" (prepared by a racing call on the same connection). */
const ALREADY_PREPARED = '42P05';

/**
 * A read run as a named prepared statement of the connection it runs on (PREPARE once per connection, then EXECUTE
 * with this call's arguments), so PostgreSQL plans it once instead of on every call, and built and compiled by
 * Kysely once per database instead of on every call. For hot queries whose planning outweighs their execution: the
 * gateway's token-with-node read plans in 1.3 ms and executes in 0.2 ms on PGlite (EXPLAIN ANALYZE, 5 nodes);
 * after five executions PostgreSQL may keep a generic plan, which it does here. Building and compiling the query
 * (and hashing its text for the statement's name) was another 0.1–0.2 ms a call (issue 15).
 *
 * `build` makes the query from its arguments and must not look at their values (it is called once, with
 * stand-ins): each argument may only be passed on to the query as a parameter. The statement's name is a hash of
 * its SQL text, so a changed query is a new statement. A connection that lost it (a restarted database, a new
 * pooled connection) prepares it again. Only SELECTs: the embedded store tells reads from writes by their text
 * (pglite-dialect.ts), and a prepared write would hide in `execute`.
 */
export function preparedRead<A extends Record<string, unknown>, R>(
  build: (db: Kysely<Database>, args: A) => Compilable<R>,
): (db: Kysely<Database>, args: A) => Promise<R[]> {
  const compiled = new WeakMap<Kysely<Database>, Statement>();
  return async (db, args) => {
    let statement = compiled.get(db);
    if (!statement) compiled.set(db, (statement = compile(db, build)));
    // EXECUTE is a utility statement: it takes no bind parameters, so its arguments are written as literals.
    const values = statement.parameters.map((p) => literal(p.kind === 'arg' ? args[p.key] : p.value));
    return execute<R>(db, statement, values.join(', '));
  };
}

/**
 * preparedRead for a query built anew by each call (its SQL text may differ from call to call, e.g. with or without
 * a page's marker): compiled every time, prepared once per distinct text and connection.
 */
export async function executePrepared<R>(db: Kysely<Database>, query: Compilable<R>): Promise<R[]> {
  const compiled = query.compile();
  if (compiled.query.kind !== 'SelectQueryNode') throw new Error(`executePrepared runs SELECTs only, not a ${compiled.query.kind}`);
  const statement = { name: statementName(compiled.sql), sql: compiled.sql, parameters: [] };
  return execute<R>(db, statement, compiled.parameters.map(literal).join(', '));
}

type Parameter = { readonly kind: 'arg'; readonly key: string } | { readonly kind: 'constant'; readonly value: unknown };
interface Statement {
  readonly name: string;
  readonly sql: string;
  readonly parameters: readonly Parameter[];
}

/** Prefix of the stand-in each argument is while the query is compiled (a NUL: no real argument can hold one). */
const STAND_IN = '\u0000lh-arg:';

function compile<A extends Record<string, unknown>>(db: Kysely<Database>, build: (db: Kysely<Database>, args: A) => Compilable<unknown>): Statement {
  const standIns = new Proxy({} as A, { get: (_target, key) => (typeof key === 'string' ? `${STAND_IN}${key}` : undefined) });
  const query = build(db, standIns).compile();
  if (query.query.kind !== 'SelectQueryNode') throw new Error(`preparedRead runs SELECTs only, not a ${query.query.kind}`);
  const parameters = query.parameters.map((value): Parameter =>
    typeof value === 'string' && value.startsWith(STAND_IN) ? { kind: 'arg', key: value.slice(STAND_IN.length) } : { kind: 'constant', value },
  );
  return { name: statementName(query.sql), sql: query.sql, parameters };
}

/** A statement's name: a hash of its text, so a changed query is a new statement. */
function statementName(text: string): string {
  return `lh_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
}

async function execute<R>(db: Kysely<Database>, statement: Statement, args: string): Promise<R[]> {
  return db.connection().execute(async (conn) => {
    // A statement without parameters is executed without parentheses (`execute name()` is a syntax error).
    const call = args === '' ? statement.name : `${statement.name}(${args})`;
    const run = async () => (await sql.raw<R>(`execute ${call}`).execute(conn)).rows;
    try {
      return await run();
    } catch (err) {
      if ((err as { code?: unknown }).code !== NOT_PREPARED) throw err;
    }
    try {
      await sql.raw(`prepare ${statement.name} as ${statement.sql}`).execute(conn);
    } catch (err) {
      if ((err as { code?: unknown }).code !== ALREADY_PREPARED) throw err;
    }
    return run();
  });
}

/**
 * A parameter as an SQL literal: strings in E'' form with backslashes and quotes escaped (safe whatever
 * standard_conforming_strings says), instants as their ISO text; anything else is refused rather than guessed.
 */
export function literal(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (value instanceof Date) return literal(value.toISOString());
  if (typeof value === 'string') {
    if (value.includes('\0')) throw new Error('a NUL character cannot be an SQL literal');
    return `E'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
  }
  throw new Error(`no SQL literal for a ${typeof value}`);
}
