import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kysely, sql } from 'kysely';
import { PGlite } from '@electric-sql/pglite';
import { PGliteDialect } from '../../src/store/pglite-dialect.js';
import { executePrepared, preparedRead } from '../../src/store/prepared-query.js';
import type { Database } from '../../src/store/database.js';

describe('preparedRead', () => {
  let db: Kysely<Database>;
  beforeAll(async () => {
    db = new Kysely<Database>({ dialect: new PGliteDialect(new PGlite()) });
    await sql`create table pets (name text primary key, legs int not null)`.execute(db);
    await sql`insert into pets values ('ada', 4), ('bo''b\\', 2), ('cy', 0)`.execute(db);
  });
  afterAll(() => db.destroy());

  it('answers each call with its own arguments, though the query is built and compiled once', async () => {
    let builds = 0;
    const pets = preparedRead((db: Kysely<any>, { min, name }: { min: number; name: string }) => {
      builds++;
      return db.selectFrom('pets').select(['name', 'legs']).where('legs', '>=', min).where('name', '<>', name).where('name', '<>', 'nobody').orderBy('name');
    });
    expect(await pets(db, { min: 2, name: 'x' })).toEqual([{ name: 'ada', legs: 4 }, { name: "bo'b\\", legs: 2 }]);
    expect(await pets(db, { min: 0, name: "bo'b\\" })).toEqual([{ name: 'ada', legs: 4 }, { name: 'cy', legs: 0 }]);
    for (let i = 0; i < 8; i++) expect(await pets(db, { min: 3, name: 'ada' })).toEqual([]);
    expect(builds).toBe(1);
  });

  it('refuses to prepare anything but a SELECT', async () => {
    const remove = preparedRead((db: Kysely<any>, { name }: { name: string }) => db.deleteFrom('pets').where('name', '=', name) as never);
    await expect(remove(db, { name: 'ada' })).rejects.toThrow(/SELECTs only/);
    expect((await sql<{ n: number }>`select count(*)::int as n from pets`.execute(db)).rows[0]!.n).toBe(3);
  });

  it('runs a query built anew by each call, with or without a clause, prepared once per text', async () => {
    const pets = (min: number | null) => {
      const q = db.selectFrom('pets' as never).select(['name' as never]).orderBy('name' as never);
      return min === null ? q : q.where('legs' as never, '>=', min as never);
    };
    for (let i = 0; i < 7; i++) {
      expect(await executePrepared(db, pets(null))).toHaveLength(3);
      expect(await executePrepared(db, pets(3))).toEqual([{ name: 'ada' }]);
    }
    await expect(executePrepared(db, db.deleteFrom('pets' as never) as never)).rejects.toThrow(/SELECTs only/);
  });
});
