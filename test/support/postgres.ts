import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * The PostgreSQL test leg: set LEASEHOLD_TEST_DATABASE_URL to a server where the user may CREATE DATABASE
 * (e.g. postgres://postgres@127.0.0.1:5432/postgres). Tests never touch that database itself; each suite
 * works in fresh, randomly named databases and drops them afterwards.
 */
export const TEST_DATABASE_URL: string | null = process.env.LEASEHOLD_TEST_DATABASE_URL || null;

export const POSTGRES_SKIP_REASON = 'PostgreSQL tests skipped: set LEASEHOLD_TEST_DATABASE_URL to run them';

export interface TestDatabase {
  readonly name: string;
  /** The admin URL with the database name swapped in. */
  readonly url: string;
  /** Drops the database, ending any session still connected to it. */
  drop(): Promise<void>;
}

/** Creates an empty database named `<prefix>_<random>` on the server behind `adminUrl`. */
export async function createTestDatabase(
  adminUrl: string = requireTestDatabaseUrl(),
  prefix = 'leasehold_test',
): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await withAdmin(adminUrl, (client) => client.query(`create database ${quoteIdent(name)}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () =>
      // WITH (FORCE) (PostgreSQL 13+): a pool a failed test left open must not keep the database alive.
      withAdmin(adminUrl, (client) => client.query(`drop database if exists ${quoteIdent(name)} with (force)`)).then(
        () => undefined,
      ),
  };
}

/**
 * Hands out fresh databases and drops them all at the end: `const dbs = testDatabases(); afterAll(dbs.dropAll)`.
 */
export function testDatabases(adminUrl?: string, prefix?: string) {
  const created: TestDatabase[] = [];
  return {
    async create(): Promise<TestDatabase> {
      const db = await createTestDatabase(adminUrl, prefix);
      created.push(db);
      return db;
    },
    async dropAll(): Promise<void> {
      const all = created.splice(0);
      await Promise.all(all.map((db) => db.drop()));
    },
  };
}

export function requireTestDatabaseUrl(): string {
  if (!TEST_DATABASE_URL) throw new Error(POSTGRES_SKIP_REASON);
  return TEST_DATABASE_URL;
}

async function withAdmin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
