import type { SeededPool } from './pool.js';
import { countOverlaps } from './seed.js';
import { elapsedMs, summarize, type LatencySummary } from './stats.js';

/** The seed workflow's request: 3 × (≥ 48 GiB, ≥ 1 GPU) + 1 × (≥ 16 GiB, ≥ 1 TB disk) for 3 days. */
export const SEED_REQUEST = {
  groups: [
    { count: 3, where: 'memory >= 48GiB and gpus >= 1' },
    { count: 1, where: 'memory >= 16GiB and disk >= 1TB' },
  ],
  duration: '3d',
} as const;

const HOUR_MS = 3_600_000;
const WARMUP = 2;
/** Fewer samples than this are never reported, whatever the time box. */
const MIN_SAMPLES = 20;

export interface QuoteCreateResult {
  readonly quote: LatencySummary;
  readonly create: LatencySummary;
  /** Answers other than 200 (quote) / 201 (create), by status. */
  readonly quoteOther: Record<string, number>;
  readonly createOther: Record<string, number>;
  /** The store's whole-inventory read (what each plan made before the planning index; kept for comparison). */
  readonly allNodes: LatencySummary;
  readonly allocationsPerLease: number;
  readonly overlaps: number;
}

/**
 * Quotes and creates of the seed request through the in-process API, one at a time (latency, not throughput).
 * Quotes ask at varied starts (now, and up to two weeks ahead, inside the seeded bookings); each create asks at
 * its own future start (2 h apart, overlapping each other and the seeded bookings) so that all can succeed.
 * A few warm-up requests of each kind run first and are not counted. Each kind stops early once it has run
 * for `timeBoxS` seconds (with at least 20 samples), so the full bench stays within minutes: n is reported.
 */
export async function benchQuoteCreate(pool: SeededPool, counts: { quotes: number; creates: number; timeBoxS: number }): Promise<QuoteCreateResult> {
  const { app } = pool;
  const token = pool.lesseeTokens[0]!;
  const base = Math.ceil(Date.now() / HOUR_MS) * HOUR_MS;
  const quoteBody = (i: number) => (i % 4 === 0 ? { ...SEED_REQUEST } : { ...SEED_REQUEST, start: new Date(base + (i % 84) * 4 * HOUR_MS).toISOString() });

  // Warm-up: JIT, prepared plans, caches. The creates land far after the measured ones.
  for (let i = 0; i < WARMUP; i++) {
    await app.request('POST', '/v1/leases/quote', { token, body: quoteBody(i) });
    await app.request('POST', '/v1/leases', { token, body: { ...SEED_REQUEST, name: `warmup-${i}`, start: new Date(base + (50 + i * 4) * 24 * HOUR_MS).toISOString() } });
  }

  const quoteMs: number[] = [];
  const quoteOther: Record<string, number> = {};
  const box = (since: number, i: number, max: number) => i < max && (i < MIN_SAMPLES || elapsedMs(since) < counts.timeBoxS * 1000);
  const quotesStarted = performance.now();
  for (let i = 0; box(quotesStarted, i, counts.quotes); i++) {
    const started = performance.now();
    const reply = await app.request('POST', '/v1/leases/quote', { token, body: quoteBody(i) });
    quoteMs.push(elapsedMs(started));
    if (reply.status !== 200) quoteOther[statusKey(reply)] = (quoteOther[statusKey(reply)] ?? 0) + 1;
  }

  const createMs: number[] = [];
  const createOther: Record<string, number> = {};
  let allocations = 0;
  let created = 0;
  const createsStarted = performance.now();
  for (let i = 0; box(createsStarted, i, counts.creates); i++) {
    const start = new Date(base + 24 * HOUR_MS + i * 2 * HOUR_MS).toISOString();
    const started = performance.now();
    const reply = await app.request('POST', '/v1/leases', { token, body: { ...SEED_REQUEST, name: `bench-${i}`, start } });
    createMs.push(elapsedMs(started));
    if (reply.status === 201) {
      created++;
      allocations += reply.body.allocations.length;
    } else createOther[statusKey(reply)] = (createOther[statusKey(reply)] ?? 0) + 1;
  }

  const allNodesMs: number[] = [];
  for (let i = 0; i < 20; i++) {
    const started = performance.now();
    await pool.db.store.allNodes();
    allNodesMs.push(elapsedMs(started));
  }

  return {
    quote: summarize(quoteMs),
    create: summarize(createMs),
    quoteOther,
    createOther,
    allNodes: summarize(allNodesMs),
    allocationsPerLease: created === 0 ? 0 : allocations / created,
    overlaps: await countOverlaps(pool.db.sql),
  };
}

function statusKey(reply: { status: number; body: any }): string {
  const code = reply.body?.error?.code;
  return code ? `${reply.status} ${code}` : String(reply.status);
}
