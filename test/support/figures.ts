import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';

export interface Summary {
  n: number;
  min: number;
  median: number;
  p95: number;
  max: number;
  mean: number;
}

export function summarize(values: readonly number[]): Summary {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    n: s.length,
    min: round(s[0] ?? NaN),
    median: round(at(0.5)),
    p95: round(at(0.95)),
    max: round(s[s.length - 1] ?? NaN),
    mean: round(s.reduce((a, b) => a + b, 0) / Math.max(1, s.length)),
  };
}

type FigureValue = number | string | Summary | Record<string, unknown>;

/**
 * Figures of one suite: printed as `[figures] <suite> | <label>: <value>` lines (one block per suite, at the
 * end), and merged into the JSON object in $LEASEHOLD_FIGURES_FILE under the suite's key when that is set.
 */
export class Figures {
  private readonly entries: Array<{ key: string; label: string; value: FigureValue; unit: string }> = [];
  /** How busy the machine was when the suite began: figures from a loaded machine are not comparable. */
  private readonly machine = { cpus: availableParallelism(), load_average_1m_at_start: Math.round(loadavg()[0]! * 100) / 100 };

  constructor(readonly suite: string) {}

  add(key: string, label: string, value: FigureValue, unit = ''): void {
    this.entries.push({ key, label, value, unit });
  }

  get size(): number {
    return this.entries.length;
  }

  /** Prints the block and writes the JSON file (if asked for). Safe to call with nothing recorded. */
  report(): void {
    if (this.entries.length === 0) return;
    const load = { ...this.machine, load_average_1m_at_end: Math.round(loadavg()[0]! * 100) / 100 };
    const lines = [
      `[figures] ==== ${this.suite} ==== (${load.cpus} cpus, load average ${load.load_average_1m_at_start} at start, ${load.load_average_1m_at_end} at end)`,
    ];
    for (const e of this.entries) lines.push(`[figures] ${this.suite} | ${e.label}: ${formatValue(e.value, e.unit)}`);
    console.log(lines.join('\n'));
    const file = process.env.LEASEHOLD_FIGURES_FILE;
    if (file) {
      const section: Record<string, unknown> = { recorded_at: new Date().toISOString(), machine: load };
      for (const e of this.entries) section[e.key] = e.unit ? { unit: e.unit, value: e.value } : e.value;
      mergeJsonFile(file, { [this.suite]: section });
    }
  }
}

function formatValue(v: FigureValue, unit: string): string {
  const u = unit ? ` ${unit}` : '';
  if (typeof v === 'number' || typeof v === 'string') return `${v}${u}`;
  if (isSummary(v)) return `median ${v.median}${u}, min ${v.min}, p95 ${v.p95}, max ${v.max} (n=${v.n})`;
  return JSON.stringify(v);
}

function isSummary(v: unknown): v is Summary {
  return typeof v === 'object' && v !== null && 'median' in v && 'n' in v;
}

/** Read-merge-write under a lock directory: suites in parallel workers share one file. */
function mergeJsonFile(file: string, add: Record<string, unknown>): void {
  const lock = `${file}.lock`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) {
        rmSync(lock, { recursive: true, force: true }); // a holder that died
        continue;
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
  try {
    let current: Record<string, unknown> = {};
    try {
      current = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch {
      // absent or not JSON: start afresh
    }
    const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ ...current, ...add }, null, 2)}\n`);
    renameSync(tmp, file);
  } finally {
    rmdirSync(lock);
  }
}
