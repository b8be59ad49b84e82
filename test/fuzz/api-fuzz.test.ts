import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { dbSnapshot } from './db-snapshot.js';
import { allOperations, createFixture, fuzzApi, seedFromEnv, type FuzzFixture } from './fuzz-harness.js';
import type { Operation } from './operations.js';

/**
 * Issue 11: ≥ 10,000 generated bad requests to every route and list filter, on the in-process app (PGlite).
 * LEASEHOLD_FUZZ_RUNS changes the count, LEASEHOLD_FUZZ_SEED replays a run. ≈ 15 s on 2 busy cores.
 */
const RUNS = Number(process.env.LEASEHOLD_FUZZ_RUNS ?? 10_000);

let t: TestApp;
let fixture: FuzzFixture;
let ops: Operation[];

beforeAll(async () => {
  t = await startTestApp();
  fixture = await createFixture(t);
  ops = await allOperations(t);
});
afterAll(() => t?.close());

describe('bad requests to every route (fast-check, in-process on PGlite)', () => {
  it(
    `${RUNS.toLocaleString('en-US')} bad requests as the operator, a member, no token and a junk token: never a 5xx, always a 4xx in the one error shape, nothing written`,
    async () => {
      // Every route of the OpenAPI document is fuzzed, and the gateway's: a document that lost its routes would pass.
      expect(ops.filter((o) => o.path.startsWith('/v1/')).length).toBeGreaterThan(30);
      expect(ops.some((o) => o.path.startsWith('/baremetal/'))).toBe(true);
      const before = await dbSnapshot(t.store);
      const tally = await fuzzApi(t, ops, fixture, { runs: RUNS, seed: seedFromEnv() });
      console.log(tally.summary(''));
      expect(tally.serverErrors).toBe(0);
      expect(await dbSnapshot(t.store)).toEqual(before);
    },
    180_000,
  );
});
