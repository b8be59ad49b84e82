import { buildApp, type BenchApp, type Reply } from './bench-app.js';
import { RACE_TRAIT } from './inventory.js';
import type { SeededPool } from './pool.js';
import { countOverlaps } from './seed.js';
import { elapsedMs, summarize, type LatencySummary } from './stats.js';

const HOUR_MS = 3_600_000;

export interface RaceResult {
  /** How the clients reached the database. */
  readonly topology: string;
  /** Nodes in the pool, leases seeded in it. */
  readonly poolNodes: number;
  readonly poolLeases: number;
  readonly clients: number;
  readonly rounds: number;
  readonly requests: number;
  readonly successes: number;
  /** 409 answers by error code (lease_unavailable: the plan saw the nodes taken; lease_conflict: lost at insert). */
  readonly conflicts: Record<string, number>;
  /** Anything else (must be empty). */
  readonly errors: Record<string, number>;
  /** Winners the nodes allow: per round floor(race nodes / nodes per lease). */
  readonly expectedSuccesses: number;
  readonly wallMs: number;
  readonly leasesPerSecond: number;
  readonly requestsPerSecond: number;
  readonly latency: LatencySummary;
  /** Rounds in which two winners got the same node (must be 0). */
  readonly duplicateNodes: number;
  /** Overlapping holding allocations found afterwards by SQL over the whole table (must be 0). */
  readonly overlaps: number;
  /** PostgreSQL: the most sessions seen waiting on a lock at once (sampled every 250 ms). */
  readonly peakLockWaiters: number | null;
  /** PostgreSQL: deadlocks the server detected in the race's database (filled in once it is closed). */
  deadlocks: number | null;
}

/**
 * `clients` concurrent clients (of the 8 lessee projects) race, round after round, for the same small set of
 * race nodes in the same window: every request asks for 2 nodes `has CUSTOM_BENCH_RACE` for 12 h at the round's
 * start. On PostgreSQL the clients alternate between two in-process apps, each with its own store and pool of 10
 * connections (two replicas sharing one database); on PGlite there is one app (one session). All apps share the
 * process's event loop, so the JavaScript work of planning is serialized whatever the database does.
 * With `boxS`, no new round starts after that many seconds (at least one round runs).
 */
export async function benchRace(
  pool: SeededPool,
  sizes: { clients: number; rounds: number; raceNodes: number },
  boxS: number | null,
): Promise<RaceResult> {
  const apps: BenchApp[] = [pool.app];
  let topology = 'one app, PGlite (single session)';
  if (pool.db.engine === 'postgres') {
    apps.push(await buildApp(await pool.db.openReplicaStore(), pool.driver));
    topology = '2 in-process apps, each its own pg pool of 10, one database';
  }
  const perLease = 2;
  const body = (start: string) => ({ groups: [{ count: perLease, where: `has ${RACE_TRAIT}` }], start, duration: '12h' });
  const base = Math.ceil(Date.now() / HOUR_MS) * HOUR_MS + 24 * HOUR_MS;

  // Warm-up the second app (JIT is shared; its pool is not) with one lease far away, not counted.
  for (const app of apps) await app.request('POST', '/v1/leases/quote', { token: pool.lesseeTokens[0]!, body: body(new Date(base).toISOString()) });

  let peakLockWaiters: number | null = null;
  let sampling = pool.db.engine === 'postgres';
  const sampler = (async () => {
    while (sampling) {
      const [row] = await pool.db.sql.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
      peakLockWaiters = Math.max(peakLockWaiters ?? 0, row!.n);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  const latencies: number[] = [];
  const conflicts: Record<string, number> = {};
  const errors: Record<string, number> = {};
  let successes = 0;
  let duplicateNodes = 0;
  let wallMs = 0;
  let rounds = 0;
  for (let round = 0; round < sizes.rounds && (round === 0 || boxS === null || wallMs < boxS * 1000); round++) {
    rounds++;
    const start = new Date(base + round * 24 * HOUR_MS).toISOString();
    const roundStarted = performance.now();
    const replies = await Promise.all(
      Array.from({ length: sizes.clients }, async (_, i): Promise<Reply> => {
        const app = apps[i % apps.length]!;
        const token = pool.lesseeTokens[i % pool.lesseeTokens.length]!;
        const started = performance.now();
        try {
          return await app.request('POST', '/v1/leases', { token, body: { ...body(start), name: `race-${round}-${i}` } });
        } finally {
          latencies.push(elapsedMs(started));
        }
      }),
    );
    wallMs += elapsedMs(roundStarted);
    const nodes: string[] = [];
    for (const reply of replies) {
      if (reply.status === 201) {
        successes++;
        nodes.push(...reply.body.allocations.map((a: { node_id: string }) => a.node_id));
      } else if (reply.status === 409) {
        const code = String(reply.body?.error?.code);
        conflicts[code] = (conflicts[code] ?? 0) + 1;
      } else {
        const key = `${reply.status} ${reply.body?.error?.code ?? ''}`.trim();
        errors[key] = (errors[key] ?? 0) + 1;
      }
    }
    duplicateNodes += nodes.length - new Set(nodes).size;
  }
  sampling = false;
  await sampler;
  const requests = sizes.clients * rounds;
  return {
    topology,
    poolNodes: pool.sizes.nodes,
    poolLeases: pool.seed.leases,
    clients: sizes.clients,
    rounds,
    requests,
    successes,
    conflicts,
    errors,
    expectedSuccesses: rounds * Math.min(sizes.clients, Math.floor(sizes.raceNodes / perLease)),
    wallMs,
    leasesPerSecond: successes / (wallMs / 1000),
    requestsPerSecond: requests / (wallMs / 1000),
    latency: summarize(latencies),
    duplicateNodes,
    overlaps: await countOverlaps(pool.db.sql),
    peakLockWaiters,
    deadlocks: null,
  };
}
