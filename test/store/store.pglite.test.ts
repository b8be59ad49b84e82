import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readMigrations } from '../../src/store/migrate.js';
import { openStore } from '../../src/store/open-store.js';
import { defineStoreContract } from './store-contract.js';
import { nodeRecord, T0 } from './contract/fixtures.js';

defineStoreContract('PGlite (in memory)', () => openStore({ dataDir: 'memory://' }));

describe('PGlite store in a data directory', () => {
  it('creates <dataDir>/pgdata, keeps the data across a restart and migrates only once', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'leasehold-store-'));
    const logged: object[] = [];
    const logger = { info: (obj: object) => void logged.push(obj) };
    try {
      const first = await openStore({ dataDir: join(dataDir, 'nested'), logger });
      expect(first.engine).toBe('pglite');
      await first.createProject({ name: 'kept' }, T0);
      await first.close();
      expect((await stat(join(dataDir, 'nested', 'pgdata'))).isDirectory()).toBe(true);
      expect(logged).toEqual([{ applied: (await readMigrations()).map((m) => m.name) }]);

      const second = await openStore({ dataDir: join(dataDir, 'nested'), logger });
      expect((await second.findProject('kept'))?.created_at).toEqual(T0);
      await second.close();
      expect(logged).toHaveLength(1);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('PGlite store under concurrent calls', () => {
  it('serialises transactions on its single session: concurrent bootstraps create one admin', async () => {
    const store = await openStore({ dataDir: 'memory://' });
    try {
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          store.bootstrapAdmin({ userName: 'admin', token: { token_hash: `h${i}`, prefix: 'lh_' } }, T0),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const [users, syncs] = await Promise.all([
        store.listUsers({}, { limit: 10 }),
        Promise.all([1, 2, 3].map(() => store.syncNodes([nodeRecord('a'), nodeRecord('b')], T0))),
      ]);
      expect(users.items).toHaveLength(1);
      expect(syncs.map((r) => r.added)).toEqual([2, 0, 0]);
    } finally {
      await store.close();
    }
  });
});

describe('migration files', () => {
  it('are numbered NNNN_name.sql from 0001 without gaps', async () => {
    const migrations = await readMigrations();
    expect(migrations[0]?.name).toBe('0001_init');
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
  });
});
