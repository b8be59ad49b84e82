import { ADMIN_TOKEN } from '../test/support/test-app.js';
import type { BenchApp } from './bench-app.js';
import type { EngineName } from './options.js';
import { seedPool } from './pool.js';
import { SEED_REQUEST } from './quote-create.js';
import { elapsedMs, summarize, type LatencySummary } from './stats.js';

const HOUR_MS = 3_600_000;
/** Leases per node in these pools: the inventory grows, the bookings per node stay the same. */
export const GROWTH_LEASES_PER_NODE = 2;
const LIST_RUNS = 5;

export interface GrowthPoint {
  readonly nodes: number;
  readonly leases: number;
  readonly seedS: number;
  /** The seed request's quote (section 1's request) at varied starts. */
  readonly quote: LatencySummary;
  /** Every node listed by the operator (GET /v1/nodes, pages of 1,000 followed to the end), ms per whole list. */
  readonly nodeList: ListTimes;
  /** Every offer listed by the operator (GET /v1/offers, pages of 1,000, with free windows), ms per whole list. */
  readonly offerList: ListTimes;
}

/** A whole list: served (every page's last byte in) and parsed (the client's JSON.parse of every page too). */
export interface ListTimes {
  readonly served: LatencySummary;
  readonly parsed: LatencySummary;
}

/**
 * How latency grows with the inventory: for each size, a pool of that many nodes (section 1's mix) with two leases
 * per node and an offer per node, then quotes of the seed request and whole node and offer lists, as the
 * operator, through the in-process API. The goal: quotes grow clearly slower than the inventory.
 */
export async function benchGrowth(engine: EngineName, adminUrl: string, sizes: { growth: readonly number[]; growthQuotes: number }, progress: (m: string) => void): Promise<GrowthPoint[]> {
  const points: GrowthPoint[] = [];
  for (const nodes of sizes.growth) {
    progress(`[${engine}] 5: ${nodes.toLocaleString('en-US')} nodes`);
    const pool = await seedPool(engine, adminUrl, { nodes, leases: nodes * GROWTH_LEASES_PER_NODE, raceNodes: 0 });
    try {
      const { app } = pool;
      const token = pool.lesseeTokens[0]!;
      const base = Math.ceil(Date.now() / HOUR_MS) * HOUR_MS;
      const body = (i: number) => ({ ...SEED_REQUEST, start: new Date(base + (i % 84) * 4 * HOUR_MS).toISOString() });
      for (let i = 0; i < 2; i++) await app.request('POST', '/v1/leases/quote', { token, body: body(i) });
      const quotes: number[] = [];
      for (let i = 0; i < sizes.growthQuotes; i++) {
        const started = performance.now();
        const reply = await app.request('POST', '/v1/leases/quote', { token, body: body(i) });
        quotes.push(elapsedMs(started));
        if (reply.status !== 200) throw new Error(`quote at ${nodes} nodes: HTTP ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`);
      }
      const nodeList = await timeLists(app, '/v1/nodes', 'nodes', nodes);
      const offerList = await timeLists(app, '/v1/offers', 'offers', nodes);
      points.push({ nodes, leases: pool.seed.leases, seedS: pool.timings.totalMs / 1000, quote: summarize(quotes), nodeList, offerList });
    } finally {
      await pool.close();
    }
  }
  return points;
}

/**
 * Lists everything under `path` as the operator, page after page of 1,000, LIST_RUNS times (after one warm-up).
 * Two figures per whole list: `served`, each page's request until its last byte is in (what the server costs, as
 * ESI-Leap's figures are), and the whole list with the client decoding and parsing every page's JSON (8.5 MB for
 * 10,000 nodes: ≈ 55 ms on the 2-core machine, whatever the server).
 */
async function timeLists(app: BenchApp, path: string, key: string, expected: number): Promise<ListTimes> {
  const served: number[] = [];
  const parsed: number[] = [];
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
  for (let run = 0; run <= LIST_RUNS; run++) {
    const started = performance.now();
    let serving = 0;
    let count = 0;
    let next: string | null = `${path}?limit=1000`;
    while (next) {
      const asked = performance.now();
      const reply = await app.app.request(next, { headers });
      const bytes = await reply.arrayBuffer();
      serving += elapsedMs(asked);
      if (reply.status !== 200) throw new Error(`GET ${next}: HTTP ${reply.status}`);
      const body = JSON.parse(new TextDecoder().decode(bytes));
      count += body[key].length;
      next = body.next ? new URL(body.next, 'http://x').pathname + new URL(body.next, 'http://x').search : null;
    }
    if (count < expected) throw new Error(`${path}: listed ${count}, expected ${expected}`);
    if (run > 0) {
      served.push(serving);
      parsed.push(elapsedMs(started));
    }
  }
  return { served: summarize(served), parsed: summarize(parsed) };
}
