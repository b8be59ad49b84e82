import { existsSync } from 'node:fs';
import { SHIPPED_IMAGE } from '../../src/store/pglite-image.js';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { btree_gist } from '@electric-sql/pglite/contrib/btree_gist';
import { describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../src/store/migrate.js';
import { MEMORY_DATA_DIR } from '../../src/store/open-pglite.js';
import { PGliteDialect } from '../../src/store/pglite-dialect.js';
import { openStore } from '../../src/store/open-store.js';
import { defineStoreContract } from './store-contract.js';
import { nodeRecord, T0 } from './contract/fixtures.js';

defineStoreContract('PGlite (in memory)', () => openStore({ dataDir: 'memory://' }));

describe('PGlite store in a data directory', () => {
  it('creates <dataDir>/pgdata from the shipped image (already migrated), keeps the data across a restart and migrates nothing twice', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'leasehold-store-'));
    const logged: object[] = [];
    const logger = { info: (obj: object) => void logged.push(obj) };
    try {
      const first = await openStore({ dataDir: join(dataDir, 'nested'), logger });
      expect(first.engine).toBe('pglite');
      await first.createProject({ name: 'kept' }, T0);
      await first.close();
      expect((await stat(join(dataDir, 'nested', 'pgdata'))).isDirectory()).toBe(true);
      // The image npm run build made is current: nothing left to apply (without it, every migration is).
      const image = existsSync(SHIPPED_IMAGE);
      expect(logged).toEqual(image ? [] : [{ applied: (await readMigrations()).map((m) => m.name) }]);

      const second = await openStore({ dataDir: join(dataDir, 'nested'), logger });
      expect((await second.findProject('kept'))?.created_at).toEqual(T0);
      await second.close();
      expect(logged).toHaveLength(image ? 0 : 1);
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

describe('migration 0006 on a database from before it', () => {
  it('lists existing tokens without showing part of a chosen admin token: a fingerprint for the bootstrap token, lh_ and 4 characters for the rest', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'leasehold-migrations-'));
    const pglite = await PGlite.create(MEMORY_DATA_DIR, { extensions: { btree_gist } });
    try {
      const all = await readMigrations();
      for (const m of all.filter((m) => m.version <= 5)) await writeFile(join(dir, `${m.name}.sql`), m.sql);
      const run = (fn: Parameters<Parameters<typeof migrate>[0]>[0]) => new PGliteDialect(pglite).runExclusive(fn);
      await migrate(run as Parameters<typeof migrate>[0], { directory: pathToFileURL(`${dir}/`) });
      await pglite.exec(`
        insert into users (id, name, role, created_at) values ('00000000-0000-4000-8000-000000000001', 'admin', 'admin', now());
        insert into api_tokens (user_id, token_hash, prefix, description, created_at) values
          ('00000000-0000-4000-8000-000000000001', 'abcdef0123456789', 'my-admin-', 'bootstrap admin token', now()),
          ('00000000-0000-4000-8000-000000000001', '0123456789abcdef', 'lh_AbCdEf', 'ci', now());`);
      expect(await migrate(run as Parameters<typeof migrate>[0])).toEqual(all.filter((m) => m.version > 5).map((m) => m.name));
      const rows = await pglite.query<{ prefix: string }>('select prefix from api_tokens order by description');
      expect(rows.rows.map((r) => r.prefix)).toEqual(['sha256:abcdef01', 'lh_AbCd']);
    } finally {
      await pglite.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('migration files', () => {
  it('are numbered NNNN_name.sql from 0001, in increasing order (branches may leave a number to another)', async () => {
    const migrations = await readMigrations();
    expect(migrations[0]?.name).toBe('0001_init');
    expect(migrations.every((m, i) => i === 0 || m.version > migrations[i - 1]!.version)).toBe(true);
  });
});
