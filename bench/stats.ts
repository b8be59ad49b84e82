import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Small measuring helpers: latency summaries, a wall-clock stopwatch, and the peak RSS of a section. */

export interface LatencySummary {
  readonly n: number;
  readonly min: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/** Nearest-rank percentiles (ms) of `samples`. */
export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  const rank = (p: number) => (n === 0 ? NaN : sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))]!);
  const mean = n === 0 ? NaN : sorted.reduce((s, x) => s + x, 0) / n;
  return { n, min: n === 0 ? NaN : sorted[0]!, p50: rank(50), p90: rank(90), p99: rank(99), max: n === 0 ? NaN : sorted[n - 1]!, mean };
}

export function elapsedMs(startedAt: number): number {
  return performance.now() - startedAt;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Samples process.memoryUsage().rss every 50 ms while a section runs; `stop()` returns the peak in bytes. The
 * process is shared by every section, so a later section's peak includes what earlier ones left behind (PGlite's
 * WebAssembly memory never shrinks); each section starts after a forced garbage collection.
 */
export class RssPeak {
  private peak = process.memoryUsage().rss;
  private readonly timer: NodeJS.Timeout;

  constructor() {
    this.timer = setInterval(() => this.sample(), 50);
    this.timer.unref();
  }

  sample(): void {
    const rss = process.memoryUsage().rss;
    if (rss > this.peak) this.peak = rss;
  }

  stop(): number {
    this.sample();
    clearInterval(this.timer);
    return this.peak;
  }
}

/** Runs `fn` while sampling RSS; returns its result and the peak. */
export async function withRssPeak<T>(fn: () => Promise<T>): Promise<{ result: T; rssPeak: number }> {
  forceGc();
  const peak = new RssPeak();
  try {
    const result = await fn();
    return { result, rssPeak: peak.stop() };
  } finally {
    peak.stop();
  }
}

export const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`;

export const fmt = (ms: number, digits = 1) => (Number.isFinite(ms) ? ms.toFixed(digits) : '-');

/** A plain-text table: the first row is the header; numbers right-aligned. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const line = (r: readonly string[]) =>
    r
      .map((cell, c) => (c > 0 && /^[-\d.,% ]+(ms|s|\/s|MiB)?$/.test(cell) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd();
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

/** A small deterministic PRNG (mulberry32), so every run seeds the same data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let gcFn: (() => void) | null | undefined;

/** A full garbage collection, without needing `node --expose-gc` on the command line. */
export function forceGc(): void {
  if (gcFn === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      gcFn = runInNewContext('gc') as () => void;
    } catch {
      gcFn = null;
    }
  }
  gcFn?.();
}
