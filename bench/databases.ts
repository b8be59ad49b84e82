import { randomBytes } from 'node:crypto';
import { Kysely } from 'kysely';
import pg from 'pg';
import type { Database } from '../src/store/database.js';
import { KyselyStore } from '../src/store/kysely-store.js';
import { MEMORY_DATA_DIR, openPGlite } from '../src/store/open-pglite.js';
import { openStore } from '../src/store/open-store.js';
import type { Store } from '../src/store/store.js';
import type { EngineName } from './options.js';

/** Raw SQL beside the store, for bulk seeding and the checks afterwards. */
export interface BenchSql {
  /** Several statements in one go, no parameters (simple protocol). */
  exec(script: string): Promise<void>;
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
}

/**
 * A throwaway database for one bench section: in-memory PGlite, or a fresh randomly named PostgreSQL database
 * (created on the admin URL's server, dropped by close()). Stores are opened the way the product opens them.
 */
export interface BenchDatabase {
  readonly engine: EngineName;
  /** PostgreSQL: the database's URL (another process may open it); PGlite: null. */
  readonly url: string | null;
  readonly sql: BenchSql;
  /** The store of the first app (PGlite: the only one possible, it has one session). */
  readonly store: Store;
  /** PostgreSQL only: another store on the same database with its own pool, as a second replica would have. */
  openReplicaStore(): Promise<Store>;
  /** Drops the database; on PostgreSQL first reads its statistics (once every session has ended). */
  close(): Promise<void>;
  /** After close(), PostgreSQL only: deadlocks the server detected in this database (pg_stat_database). */
  readonly closedStats: { readonly deadlocks: number } | null;
}

export async function openBenchDatabase(engine: EngineName, adminUrl: string): Promise<BenchDatabase> {
  return engine === 'pglite' ? openPGliteDatabase() : openPostgresDatabase(adminUrl);
}

async function openPGliteDatabase(): Promise<BenchDatabase> {
  // What openStore({ dataDir: 'memory://' }) does, keeping the dialect for raw SQL on the same session.
  const dialect = await openPGlite(MEMORY_DATA_DIR);
  const store = new KyselyStore(new Kysely<Database>({ dialect }), 'pglite', () => dialect.poolStats(), dialect);
  const sql: BenchSql = {
    exec: (script) => dialect.runExclusive((s) => s.exec(script)),
    query: <R>(text: string, params: readonly unknown[] = []) => dialect.runExclusive((s) => s.query<R>(text, params)),
  };
  return {
    engine: 'pglite',
    url: null,
    sql,
    store,
    openReplicaStore: () => Promise.reject(new Error('PGlite has a single session: no second replica')),
    close: () => store.close(),
    closedStats: null,
  };
}

async function openPostgresDatabase(adminUrl: string): Promise<BenchDatabase> {
  const name = `leasehold_bench_${randomBytes(5).toString('hex')}`;
  await withAdmin(adminUrl, (c) => c.query(`create database "${name}"`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const stores: Store[] = [];
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  pool.on('error', () => undefined);
  try {
    const store = await openStore({ databaseUrl, dataDir: 'unused' });
    stores.push(store);
    const database: BenchDatabase = {
      engine: 'postgres',
      url: databaseUrl,
      store,
      closedStats: null,
      sql: {
        exec: async (script) => {
          await pool.query(script);
        },
        query: async <R>(text: string, params: readonly unknown[] = []) =>
          (await pool.query(text, [...params])).rows as R[],
      },
      async openReplicaStore() {
        const replica = await openStore({ databaseUrl, dataDir: 'unused' });
        stores.push(replica);
        return replica;
      },
      async close() {
        await Promise.allSettled(stores.map((s) => s.close()));
        await pool.end().catch(() => undefined);
        // A session flushes its statistics as it exits: give the last ones a moment.
        await new Promise((resolve) => setTimeout(resolve, 500));
        await withAdmin(adminUrl, async (c) => {
          const { rows } = await c.query<{ deadlocks: string }>('select deadlocks from pg_stat_database where datname = $1', [name]);
          (database as { closedStats: { deadlocks: number } | null }).closedStats = { deadlocks: Number(rows[0]?.deadlocks ?? 0) };
          await c.query(`drop database if exists "${name}" with (force)`);
        });
      },
    };
    return database;
  } catch (err) {
    await Promise.allSettled(stores.map((s) => s.close()));
    await pool.end().catch(() => undefined);
    await withAdmin(adminUrl, (c) => c.query(`drop database if exists "${name}" with (force)`)).catch(() => undefined);
    throw err;
  }
}

/** True when a PostgreSQL server answers at `adminUrl` within a few seconds. */
export async function postgresAnswers(adminUrl: string): Promise<boolean> {
  try {
    await withAdmin(adminUrl, (c) => c.query('select 1'), 3_000);
    return true;
  } catch {
    return false;
  }
}

/** `select version()` on the admin URL's server. */
export async function postgresVersion(adminUrl: string): Promise<string> {
  const result = await withAdmin(adminUrl, (c) => c.query<{ v: string }>('select version() as v'));
  return result.rows[0]!.v;
}

async function withAdmin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
