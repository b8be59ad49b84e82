import { readdir, readFile } from 'node:fs/promises';
import { AdvisoryLock } from './advisory-locks.js';
import type { SessionRunner, SqlSession } from './sql-session.js';

/** Where the numbered SQL files live: `migrations/` at the package root, from src/store and dist/store alike. */
export const MIGRATIONS_DIR = new URL('../../migrations/', import.meta.url);

const FILE_NAME = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export interface Migration {
  readonly version: number;
  /** The file name without `.sql`, e.g. `0001_init`. */
  readonly name: string;
  readonly sql: string;
}

export interface MigrateOptions {
  readonly directory?: URL;
  readonly logger?: { info(obj: object, msg?: string): void };
  /** Stamps `applied_at`. */
  readonly now?: () => Date;
}

/** Reads `NNNN_name.sql` files in version order; refuses two files with one version. */
export async function readMigrations(directory: URL = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(directory)).filter((file) => file.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = FILE_NAME.exec(file);
    if (!match) throw new Error(`migration file ${JSON.stringify(file)} is not named NNNN_name.sql`);
    const version = Number(match[1]);
    if (migrations.some((m) => m.version === version)) throw new Error(`two migration files have version ${version}`);
    migrations.push({ version, name: file.slice(0, -'.sql'.length), sql: await readFile(new URL(file, directory), 'utf8') });
  }
  return migrations;
}

/**
 * Applies the migrations the database lacks, in order, in ONE transaction holding an advisory lock: replicas
 * starting together queue on the lock, and each one after the first finds nothing left to do. A failing file
 * rolls everything back, so a database is never left half-migrated. Returns the names it applied.
 */
export async function migrate(runSession: SessionRunner, options: MigrateOptions = {}): Promise<string[]> {
  const migrations = await readMigrations(options.directory);
  const now = options.now ?? (() => new Date());
  return runSession(async (session) => {
    await session.query('begin');
    try {
      const applied = await applyPending(session, migrations, now);
      await session.query('commit');
      if (applied.length > 0) options.logger?.info({ applied }, 'database migrated');
      return applied;
    } catch (err) {
      // A broken connection cannot roll back; the server discards the transaction with the session anyway.
      await session.query('rollback').catch(() => undefined);
      throw err;
    }
  });
}

async function applyPending(session: SqlSession, migrations: readonly Migration[], now: () => Date): Promise<string[]> {
  await session.query('select pg_advisory_xact_lock($1::bigint)', [AdvisoryLock.Migrate]);
  // Created under the lock: two first starts racing on `create table if not exists` could otherwise collide.
  await session.exec(
    `create table if not exists schema_migrations (
       version    integer primary key,
       name       text not null,
       applied_at timestamptz not null
     )`,
  );
  const rows = await session.query<{ version: number }>('select version from schema_migrations');
  const done = new Set(rows.map((row) => Number(row.version)));
  const applied: string[] = [];
  for (const migration of migrations) {
    if (done.has(migration.version)) continue;
    try {
      await session.exec(migration.sql);
    } catch (err) {
      throw new Error(`migration ${migration.name} failed: ${(err as Error).message}`, { cause: err });
    }
    await session.query('insert into schema_migrations (version, name, applied_at) values ($1, $2, $3)', [
      migration.version,
      migration.name,
      now(),
    ]);
    applied.push(migration.name);
  }
  return applied;
}
