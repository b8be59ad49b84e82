import { PowerTarget } from '../src/drivers/hardware-driver.js';
import { SimulatedDriver } from '../src/drivers/simulated/simulated-driver.js';
import { DEFAULT_CLAIM_MS, LeaseEngine } from '../src/engine/lease-engine.js';
import { CLEANING_GAP_MS, bootstrapAdmin, buildApp, expectStatus, projectMember, silentLogger, type BenchApp } from './bench-app.js';
import { openBenchDatabase, type BenchSql } from './databases.js';
import { endNodes } from './inventory.js';
import type { EngineName } from './options.js';
import { FAST_TIMINGS } from './pool.js';
import { elapsedMs, sleep, summarize, type LatencySummary } from './stats.js';

/** The end instant is set this far ahead, once every lease is active and powered on. */
const END_AHEAD_MS = 2_000;
/** Pollers start this long before the end (each should see access first) and pause this long between requests. */
const POLL_LEAD_MS = 1_000;
const POLL_PAUSE_MS = 2;
const API_CONCURRENCY = 8;

export interface LeaseEndsResult {
  readonly leases: number;
  readonly engineOptions: string;
  /** Creating the leases with the store's createLease (start now, 1 h), 8 at a time. */
  readonly createS: number;
  readonly created: number;
  /** Engine started → every allocation `active` (start tasks: lessee set in the driver). */
  readonly handOverS: number;
  /** Moving all ends to one instant, in one SQL transaction, finished this long before that instant. */
  readonly shortenMarginMs: number;
  readonly accessSample: number;
  /** Per sampled lease: ms from the end instant to the first 404 answer (lessee GET /v1/nodes/{id}). */
  readonly accessCut: LatencySummary;
  /** 200 answers to requests sent at or after the end instant (must be 0). */
  readonly grantedAfterEnd: number;
  /** 404 answers that arrived before the end instant (must be 0). */
  readonly refusedEarly: number;
  /** Sampled leases whose every request before the end was answered after it (none seen granted: no proof). */
  readonly neverGranted: number;
  /** Per allocation: seconds from the end instant to `released` (from allocations.updated_at). */
  readonly release: LatencySummary;
  readonly released: number;
  readonly otherStates: Record<string, number>;
  readonly timedOut: boolean;
}

/**
 * `count` one-node leases ending at the same instant, with the lease engine running on the real clock and the
 * simulated driver's fast timings: how soon the lessee loses access (the API decides from the lease table at
 * request time), and how long the engine takes to clear, power off, clean and release every node.
 */
export async function benchLeaseEnds(
  engine: EngineName,
  adminUrl: string,
  sizes: { ends: number; accessSample: number },
  timeoutMs: number,
): Promise<LeaseEndsResult> {
  const db = await openBenchDatabase(engine, adminUrl);
  const driver = new SimulatedDriver({ nodes: endNodes(sizes.ends, 'end-owner'), timings: FAST_TIMINGS });
  let leaseEngine: LeaseEngine | null = null;
  try {
    await bootstrapAdmin(db.store);
    const app = await buildApp(db.store, driver);
    await projectMember(app, 'end-owner');
    const lessee = await projectMember(app, 'end-lessee');
    await app.inventory.syncAll();
    await db.sql.exec(`insert into offers (node_id, project_id, period, created_at)
      select n.id, p.id, tstzrange(now() - interval '1 day', null, '[)'), now() from nodes n join projects p on p.name = n.owner`);
    const nodeIds = (await db.sql.query<{ id: string; name: string }>('select id, name from nodes order by name'));

    // Through the store's createLease (the API's transaction, without the planner: planning is section 1).
    const createStarted = performance.now();
    const created = await inParallel(nodeIds, API_CONCURRENCY, async (n) => {
      const now = new Date();
      await db.store.leasing.createLease(
        {
          name: `end-${n.name}`,
          project_id: lessee.projectId,
          created_by: null,
          start: now,
          end: new Date(now.getTime() + 3_600_000),
          request: { nodes: [n.name] },
          allocations: [{ node_id: n.id, group_index: 0 }],
          cleaning_gap_ms: CLEANING_GAP_MS,
          max_nodes: null,
        },
        [{ type: 'lease.created', actor: 'bench', actor_user_id: null, project_id: lessee.projectId, message: '1 nodes' }],
        now,
      );
    });
    const createS = elapsedMs(createStarted) / 1000;

    leaseEngine = new LeaseEngine({ store: db.store, driver, clock: app.clock, logger: silentLogger, inventory: app.inventory });
    app.leasing.attachEngine(leaseEngine);
    const handOverStarted = performance.now();
    leaseEngine.start();
    await until(db.sql, `select count(*)::int as n from allocations where state = 'active'`, sizes.ends, timeoutMs);
    const handOverS = elapsedMs(handOverStarted) / 1000;

    // The lessees power their nodes on (so the release has a power-off to do); one through the API, the rest
    // straight on the simulated hardware (the API's power route is not what this section measures).
    const first = await app.request('POST', `/v1/nodes/${nodeIds[0]!.id}/power`, { token: lessee.token, body: { action: 'on' } });
    expectStatus(first, [202], `power on ${nodeIds[0]!.name} as the lessee`);
    await inParallel(nodeIds.slice(1), API_CONCURRENCY, (n) => driver.setPowerState(n.id, PowerTarget.On));
    await sleep(200);

    const endAt = Math.ceil((Date.now() + END_AHEAD_MS) / 100) * 100;
    await shortenAll(db.sql, endAt);
    const shortenMarginMs = endAt - Date.now();
    leaseEngine.wake();

    const sample = nodeIds.filter((_, i) => i % Math.max(1, Math.floor(nodeIds.length / sizes.accessSample)) === 0).slice(0, sizes.accessSample);
    const polls = await Promise.all(sample.map((n) => pollUntilRefused(app, lessee.token, n.id, endAt)));

    const deadline = endAt + timeoutMs;
    let timedOut = false;
    try {
      await until(db.sql, `select count(*)::int as n from allocations where state in ('released', 'quarantined', 'cancelled')`, sizes.ends, deadline - Date.now());
    } catch {
      timedOut = true;
    }
    const releasedMs = await db.sql.query<{ ms: number }>(
      `select (extract(epoch from updated_at) * 1000 - $1::float8) / 1000 as ms from allocations where state = 'released'`,
      [endAt],
    );
    const states = await db.sql.query<{ state: string; n: number }>(`select state, count(*)::int as n from allocations where state <> 'released' group by state`);
    return {
      leases: sizes.ends,
      engineOptions: `defaults: 200 releases and 48 marks in flight (20 and 4 hardware calls at once), settleMs 1000, pollMs 10000, claimMs ${DEFAULT_CLAIM_MS} (renewed by a heartbeat)`,
      createS,
      created: created.length,
      handOverS,
      shortenMarginMs,
      accessSample: sample.length,
      accessCut: summarize(polls.map((p) => p.refusedAfterMs)),
      grantedAfterEnd: polls.reduce((s, p) => s + p.grantedAfterEnd, 0),
      refusedEarly: polls.filter((p) => p.refusedEarly).length,
      neverGranted: polls.filter((p) => !p.grantedBefore).length,
      release: summarize(releasedMs.map((r) => Number(r.ms))),
      released: releasedMs.length,
      otherStates: Object.fromEntries(states.map((s) => [s.state, s.n])),
      timedOut,
    };
  } finally {
    await leaseEngine?.stop().catch(() => undefined);
    await driver.close().catch(() => undefined);
    await db.close().catch(() => undefined);
  }
}

/**
 * What PATCH /v1/leases/{id} {end} does for one lease (src/store/queries/change-lease.ts), for every lease in
 * one transaction: the lease's end, its allocations' windows and cleaning gaps, the pending end tasks.
 */
async function shortenAll(sql: BenchSql, endAt: number): Promise<void> {
  const end = `'${new Date(endAt).toISOString()}'::timestamptz`;
  await sql.exec(`
    begin;
    update leases set end_at = ${end}, updated_at = now() where state in ('pending', 'active');
    update allocations set period = tstzrange(lower(period), ${end}, '[)'),
                           blocked = tstzrange(lower(period), ${end} + ${CLEANING_GAP_MS} * interval '1 millisecond', '[)'),
                           updated_at = now()
     where holds and state in ('reserved', 'starting', 'active');
    update lease_tasks set due_at = ${end} where kind = 'end' and done_at is null;
    commit;`);
}

/**
 * One lessee polling its node from POLL_LEAD_MS before the end until it is refused. A request sent before the
 * end may be decided after it (the API reads the clock when it handles the request), so only two outcomes are
 * wrong: a 404 that arrived before the end, and a 200 to a request sent at or after the end.
 */
async function pollUntilRefused(app: BenchApp, token: string, nodeId: string, endAt: number) {
  await sleep(Math.max(0, endAt - POLL_LEAD_MS - Date.now()));
  let grantedBefore = false;
  let grantedAfterEnd = 0;
  for (;;) {
    const sent = Date.now();
    const reply = await app.request('GET', `/v1/nodes/${nodeId}`, { token });
    const received = Date.now();
    if (reply.status === 200) {
      if (sent >= endAt) grantedAfterEnd++;
      else grantedBefore = true;
    } else if (reply.status === 404) {
      return { refusedAfterMs: received - endAt, refusedEarly: received < endAt, grantedBefore, grantedAfterEnd };
    } else {
      throw new Error(`GET /v1/nodes/${nodeId} as the lessee: HTTP ${reply.status} ${JSON.stringify(reply.body)}`);
    }
    if (received - endAt > 30_000) throw new Error(`the lessee still sees node ${nodeId} 30 s after its lease ended`);
    await sleep(POLL_PAUSE_MS);
  }
}

/** Polls `query` (one row `n`) every 100 ms until n >= target; throws after timeoutMs. */
async function until(sql: BenchSql, query: string, target: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await sql.query<{ n: number }>(query);
    if (row!.n >= target) return;
    if (Date.now() > deadline) throw new Error(`timed out: ${query} → ${row!.n} of ${target}`);
    await sleep(100);
  }
}

async function inParallel<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<T[]> {
  const done: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const item = items[next++]!;
        await fn(item);
        done.push(item);
      }
    }),
  );
  return done;
}
