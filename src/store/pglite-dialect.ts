import type { PGlite, Results } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { AsyncMutex } from './async-mutex.js';
import { mayHaveWritten } from './statement-writes.js';
import type { SqlSession } from './sql-session.js';

/**
 * Kysely on PGlite, reusing Kysely's PostgreSQL adapter, compiler and introspector. Written here because the
 * published kysely-pglite-dialect pins PGlite <= 0.4. PGlite has one session, so the driver hands out one
 * connection at a time (an async mutex); a Kysely transaction holds it from `begin` to `commit`.
 */
export class PGliteDialect implements Dialect {
  private readonly mutex = new AsyncMutex();
  private readonly writes = new WriteCount();

  /** `onClose` runs after PGlite has closed (e.g. to release the data directory's lock). */
  constructor(
    private readonly pglite: PGlite,
    private readonly onClose?: () => Promise<void>,
  ) {}

  /** PGlite's one session as a pool of one: held or not, and the callers waiting for it. */
  poolStats(): { readonly max: number; readonly in_use: number; readonly idle: number; readonly waiting: number } {
    const { holding, waiting } = this.mutex.load;
    return { max: 1, in_use: holding, idle: 1 - holding, waiting };
  }

  /**
   * How many statements that may have changed a row have run (statement-writes.ts decides), migrations included.
   * It grows after each such statement has run and while the session is still held (a transaction holds it to its
   * end), so a read that starts after it grew sees that write, committed. PGlite is this process's alone (its data
   * directory is locked), so nothing else writes: a read taken at one count is still right while the count has
   * not moved (store/read-cache.ts).
   */
  writeCount(): number {
    return this.writes.n;
  }

  /** Calls `listener` after each statement counted by writeCount (while the session may still be held). */
  onWrite(listener: () => void): void {
    this.writes.listeners.push(listener);
  }

  createDriver(): Driver {
    return new PGliteDriver(this.pglite, this.mutex, this.writes, this.onClose);
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }

  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }

  /**
   * Runs `fn` with exclusive use of the session, outside Kysely (migrations need `exec` for multi-statement
   * files). Shares the driver's mutex, so it never interleaves with Kysely's queries or transactions.
   */
  runExclusive<T>(fn: (session: SqlSession) => Promise<T>): Promise<T> {
    // Counted as a write once it ends, whatever it did (a migration's scripts are not looked into).
    return this.mutex.runExclusive(async () => {
      try {
        return await fn({
          query: async <R>(sqlText: string, params: readonly unknown[] = []) =>
            (await this.pglite.query<R>(sqlText, [...params])).rows,
          exec: async (script: string) => {
            await this.pglite.exec(script);
          },
        });
      } finally {
        this.writes.bump();
      }
    });
  }
}

class WriteCount {
  n = 0;
  readonly listeners: Array<() => void> = [];

  bump(): void {
    this.n++;
    for (const listener of this.listeners) listener();
  }
}

class PGliteDriver implements Driver {
  private readonly connection: PGliteConnection;
  /** The release function of the current holder, if any. */
  private release: (() => void) | null = null;

  constructor(
    private readonly pglite: PGlite,
    private readonly mutex: AsyncMutex,
    writes: WriteCount,
    private readonly onClose?: () => Promise<void>,
  ) {
    this.connection = new PGliteConnection(pglite, writes);
  }

  async init(): Promise<void> {
    await this.pglite.waitReady;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    this.release = await this.mutex.acquire();
    return this.connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    let statement = 'begin';
    if (settings.isolationLevel) statement += ` isolation level ${settings.isolationLevel}`;
    if (settings.accessMode) statement += ` ${settings.accessMode}`;
    await connection.executeQuery(CompiledQuery.raw(statement));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(): Promise<void> {
    const release = this.release;
    this.release = null;
    release?.();
  }

  /** Waits for the current holder (a running transaction finishes) before closing PGlite. */
  async destroy(): Promise<void> {
    await this.mutex.runExclusive(async () => {
      if (!this.pglite.closed) await this.pglite.close();
    });
    await this.onClose?.();
  }
}

class PGliteConnection implements DatabaseConnection {
  constructor(
    private readonly pglite: PGlite,
    private readonly writes: WriteCount,
  ) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    let result: Results<R>;
    try {
      result = await this.pglite.query<R>(compiledQuery.sql, [...compiledQuery.parameters]);
    } catch (err) {
      // Whatever failed is counted: on the safe side, as anything not known to be a read.
      this.writes.bump();
      throw err;
    }
    if (mayHaveWritten(compiledQuery.sql, result.command)) this.writes.bump();
    const command = result.command?.toUpperCase();
    const affects = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
    return {
      rows: result.rows,
      // rowCount is this statement's count (affectedRows accumulates over a multi-statement query).
      numAffectedRows: affects ? BigInt(result.rowCount ?? result.affectedRows ?? 0) : undefined,
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on PGlite');
  }
}
