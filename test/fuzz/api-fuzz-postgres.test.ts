import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_SKIP_REASON, TEST_DATABASE_URL, testDatabases } from '../support/postgres.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { dbSnapshot } from './db-snapshot.js';
import { allOperations, createFixture, fuzzApi, seedFromEnv, type FuzzFixture } from './fuzz-harness.js';
import type { Operation } from './operations.js';

/**
 * The same generators against PostgreSQL, whose errors differ from PGlite's in places (22P02, 22021, 22001,
 * 22003, 22008, 54001...): a smaller pass, when LEASEHOLD_TEST_DATABASE_URL is set. LEASEHOLD_FUZZ_PG_RUNS
 * changes the count.
 */
const RUNS = Number(process.env.LEASEHOLD_FUZZ_PG_RUNS ?? 2_000);

if (!TEST_DATABASE_URL) {
  console.warn(POSTGRES_SKIP_REASON);
  describe.skip(POSTGRES_SKIP_REASON, () => {
    it('sends the fuzzer’s bad requests to the API on PostgreSQL', () => undefined);
  });
} else {
  const databases = testDatabases(TEST_DATABASE_URL, 'leasehold_fuzz');
  let t: TestApp;
  let fixture: FuzzFixture;
  let ops: Operation[];

  beforeAll(async () => {
    t = await startTestApp(undefined, { databaseUrl: (await databases.create()).url });
    fixture = await createFixture(t);
    ops = await allOperations(t);
  });
  afterAll(async () => {
    await t?.close();
    await databases.dropAll();
  });

  describe('bad requests to every route (fast-check, in-process on PostgreSQL)', () => {
    it(
      `${RUNS.toLocaleString('en-US')} bad requests: never a 5xx, always a 4xx in the one error shape, nothing written`,
      async () => {
        const before = await dbSnapshot(t.store);
        const tally = await fuzzApi(t, ops, fixture, { runs: RUNS, seed: seedFromEnv() });
        console.log(tally.summary(' postgres'));
        expect(tally.serverErrors).toBe(0);
        expect(await dbSnapshot(t.store)).toEqual(before);
      },
      180_000,
    );
  });
}
