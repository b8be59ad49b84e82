import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { BackendUnavailableError } from '../domain/errors.js';
import type { Database } from './database.js';
import { isConnectionError } from './db-errors.js';
import { KyselyStore } from './kysely-store.js';
import { migrate } from './migrate.js';
import type { SessionRunner } from './sql-session.js';
import type { Store } from './store.js';

export interface StoreLogger {
  info(obj: object, msg?: string): void;
  warn?(obj: object, msg?: string): void;
}

export interface OpenStoreOptions {
  /** postgres://… — use PostgreSQL; otherwise embedded PGlite. */
  readonly databaseUrl?: string;
  /** PGlite keeps its files in `<dataDir>/pgdata`; `memory://` keeps them in memory (tests). */
  readonly dataDir: string;
  readonly logger?: StoreLogger;
}

/** Enough for one replica's concurrent requests; many replicas × 10 stays under PostgreSQL's default 100. */
const POOL_SIZE = 10;

/**
 * Opens the store on PostgreSQL (when `databaseUrl` is set) or PGlite, migrated and ready. Each engine's client is
 * imported only when used: a server on PostgreSQL never loads PGlite's WebAssembly, nor PGlite `pg`.
 */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.logger);
  const { openPGlite } = await import('./open-pglite.js');
  const dialect = await openPGlite(options.dataDir, { logger: options.logger });
  const store = new KyselyStore(new Kysely<Database>({ dialect }), 'pglite', () => dialect.poolStats(), dialect);
  // Kysely sets its driver up at the first query and destroys only a driver it set up: a store closed before any
  // query (a start failing after `leasehold serve` opened it early) would leave PGlite open and the data directory
  // locked. One ping sets it up (and the store answers before anyone is told it is open).
  await store.ping();
  return store;
}

async function openPostgres(databaseUrl: string, logger: StoreLogger | undefined): Promise<Store> {
  const { default: pgClient } = await import('pg');
  const pool = new pgClient.Pool({ connectionString: databaseUrl, max: POOL_SIZE, connectionTimeoutMillis: 10_000 });
  watchConnections(pool, logger);
  try {
    await migrate(pgSessions(pool), { logger });
  } catch (err) {
    await pool.end().catch(() => undefined);
    if (isConnectionError(err)) {
      throw new BackendUnavailableError(`cannot reach PostgreSQL at ${redactUrl(databaseUrl)}`, { cause: err });
    }
    throw err;
  }
  return new KyselyStore(new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), 'postgres', () => ({
    max: POOL_SIZE,
    in_use: pool.totalCount - pool.idleCount,
    idle: pool.idleCount,
    waiting: pool.waitingCount,
  }));
}

/**
 * A connection that dies (its backend terminated, the server restarted) emits 'error' on its client. pg-pool
 * listens only while the client is idle in the pool; a client checked out between two queries (a transaction
 * doing JS work, Kysely holding it) had no listener, and Node turned the event into an uncaught exception that
 * killed the process (issue 11: 8 crashes in 5 runs of pg_terminate_backend under load). Every client gets a
 * listener for its whole life: the error is logged, the client is left unqueryable, its next query fails as
 * backend_unavailable (503), and pg-pool discards it on release and opens a fresh one for the next request.
 */
function watchConnections(pool: pg.Pool, logger: StoreLogger | undefined): void {
  const warn = (obj: object, msg: string) => (logger?.warn ?? logger?.info)?.call(logger, obj, msg);
  pool.on('connect', (client) => {
    client.on('error', (err: Error & { code?: string }) => warn({ code: err.code, error: err.message }, 'database connection lost'));
  });
  // The pool re-emits an idle client's error after dropping it; the client's own listener has logged it already.
  pool.on('error', () => undefined);
}

/** One pooled client per session; a query without parameters uses the simple protocol (multi-statement). */
function pgSessions(pool: pg.Pool): SessionRunner {
  return async (fn) => {
    const client = await pool.connect();
    let failure: Error | undefined;
    try {
      return await fn({
        query: async (text, params = []) => (await client.query(text, [...params])).rows,
        exec: async (script) => {
          await client.query(script);
        },
      });
    } catch (err) {
      failure = err instanceof Error ? err : new Error(String(err));
      throw err;
    } finally {
      // A session that failed may be mid-transaction or broken: destroy it rather than pool it.
      client.release(failure);
    }
  };
}

/** The URL without its password, for messages. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable DATABASE_URL)';
  }
}
