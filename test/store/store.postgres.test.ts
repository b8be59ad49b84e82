import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { BackendUnavailableError } from '../../src/domain/errors.js';
import { readMigrations } from '../../src/store/migrate.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/store.js';
import { POSTGRES_SKIP_REASON, TEST_DATABASE_URL, testDatabases } from '../support/postgres.js';
import { nodeRecord, T0 } from './contract/fixtures.js';
import { defineStoreContract } from './store-contract.js';

if (!TEST_DATABASE_URL) {
  // Visible in the run output: a skipped suite named after the reason, and the reason on stderr.
  console.warn(POSTGRES_SKIP_REASON);
  describe.skip(POSTGRES_SKIP_REASON, () => {
    it('runs the Store contract and the concurrency tests on PostgreSQL', () => undefined);
  });
} else {
  const databases = testDatabases(TEST_DATABASE_URL, 'leasehold_store');
  afterAll(() => databases.dropAll());

  // Each test gets its own empty database: CREATE DATABASE takes ~50 ms.
  defineStoreContract('PostgreSQL', async () => openStore({ databaseUrl: (await databases.create()).url, dataDir: 'unused' }));

  describe('PostgreSQL store with several replicas', () => {
    async function query<R>(url: string, text: string): Promise<R[]> {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(text)).rows as R[];
      } finally {
        await client.end();
      }
    }

    async function withStores<T>(stores: Promise<Store>[], fn: (stores: Store[]) => Promise<T>): Promise<T> {
      const settled = await Promise.allSettled(stores);
      const opened = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      try {
        const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
        if (failed) throw failed.reason;
        return await fn(opened);
      } finally {
        await Promise.all(opened.map((store) => store.close()));
      }
    }

    it('stores migrating one fresh database at the same moment all succeed with one set of migrations', async () => {
      const { url } = await databases.create();
      await withStores(
        Array.from({ length: 4 }, () => openStore({ databaseUrl: url, dataDir: 'unused' })),
        async (stores) => {
          expect(stores.map((s) => s.engine)).toEqual(['postgres', 'postgres', 'postgres', 'postgres']);
          const rows = await query<{ version: number; name: string }>(url, 'select version, name from schema_migrations order by version');
          expect(rows).toEqual((await readMigrations()).map((m) => ({ version: m.version, name: m.name })));
          await Promise.all(stores.map((s) => s.ping()));
        },
      );
    });

    it('concurrent bootstrapAdmin calls on one database create exactly one admin', async () => {
      const { url } = await databases.create();
      await withStores(
        Array.from({ length: 3 }, () => openStore({ databaseUrl: url, dataDir: 'unused' })),
        async (stores) => {
          const results = await Promise.all(
            stores.flatMap((store, i) =>
              [0, 1].map((j) =>
                store.bootstrapAdmin({ userName: 'admin', token: { token_hash: `hash-${i}-${j}`, prefix: 'lh_' } }, T0),
              ),
            ),
          );
          expect(results.filter(Boolean)).toHaveLength(1);
          expect(await query(url, 'select name, role from users')).toEqual([{ name: 'admin', role: 'admin' }]);
          expect(await query(url, 'select count(*)::int as n from api_tokens')).toEqual([{ n: 1 }]);
        },
      );
    });

    it('concurrent inventory syncs from several replicas agree and count each change once', async () => {
      const { url } = await databases.create();
      await withStores(
        Array.from({ length: 3 }, () => openStore({ databaseUrl: url, dataDir: 'unused' })),
        async (stores) => {
          const inventory = Array.from({ length: 50 }, (_, i) => nodeRecord(`n${i}`));
          const results = await Promise.all(stores.map((store) => store.syncNodes(inventory, T0)));
          expect(results.reduce((sum, r) => sum + r.added, 0)).toBe(50);
          expect(results.reduce((sum, r) => sum + r.unchanged, 0)).toBe(100);
          expect((await stores[0]!.listNodes({}, { kind: 'all' }, { limit: 100 })).items).toHaveLength(50);
        },
      );
    });

    it('an unreachable server is BackendUnavailableError, without the password in the message', async () => {
      const attempt = openStore({ databaseUrl: 'postgres://leasehold:s3cret@127.0.0.1:1/leasehold', dataDir: 'unused' });
      await expect(attempt).rejects.toBeInstanceOf(BackendUnavailableError);
      await expect(attempt).rejects.not.toThrow(/s3cret/);
    });
  });
}
