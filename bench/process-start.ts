import { spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { LEASEHOLD_BIN, ownedDataDir, PREFIX } from './stack-processes.js';
import { sleep, summarize, type LatencySummary } from './stats.js';

const RUNS = 3;
/** The demo after start, idle, before its memory is read. */
const IDLE_MS = 5_000;

export interface ProcessResult {
  /** `leasehold serve` on a new data directory (embedded PGlite, demo inventory): spawn → first 200 of /healthz, ms. */
  readonly fresh: LatencySummary;
  /** The same data directory again (after a clean stop). */
  readonly restart: LatencySummary;
  /** Resident memory of the idle demo IDLE_MS after its start, and its peak so far (VmRSS, VmHWM), bytes. */
  readonly idleRss: number;
  readonly idlePeak: number;
}

/**
 * The real `leasehold serve` as an operator starts it (demo inventory, embedded store): how soon it answers, on a
 * new data directory and on one it used before, and what it holds in memory when idle.
 */
export async function benchProcess(): Promise<ProcessResult> {
  const fresh: number[] = [];
  const restart: number[] = [];
  let idleRss = 0;
  let idlePeak = 0;
  for (let run = 0; run < RUNS; run++) {
    const dataDir = ownedDataDir(PREFIX.server);
    try {
      const first = await serve(dataDir, run === 0);
      fresh.push(first.ms);
      if (first.rss) [idleRss, idlePeak] = first.rss;
      restart.push((await serve(dataDir, false)).ms);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return { fresh: summarize(fresh), restart: summarize(restart), idleRss, idlePeak };
}

async function serve(dataDir: string, readMemory: boolean): Promise<{ ms: number; rss: [number, number] | null }> {
  const started = performance.now();
  const proc = spawn(process.execPath, [LEASEHOLD_BIN, 'serve', '--port', '0'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? tmpdir(), LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  try {
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`leasehold serve did not listen within 60 s:\n${out.slice(-2000)}`)), 60_000);
      const keep = (d: Buffer) => {
        out = (out + d.toString()).slice(-8_192);
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      };
      proc.stdout!.on('data', keep);
      proc.stderr!.on('data', keep);
      void exited.then(() => reject(new Error(`leasehold serve exited:\n${out.slice(-2000)}`)));
    });
    for (;;) {
      const res = await fetch(`${url}/healthz`).catch(() => null);
      if (res?.status === 200) break;
      await sleep(5);
    }
    const ms = performance.now() - started;
    let rss: [number, number] | null = null;
    if (readMemory) {
      await sleep(IDLE_MS);
      const status = readFileSync(`/proc/${proc.pid}/status`, 'utf8');
      const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
      rss = [kb('VmRSS'), kb('VmHWM')];
    }
    return { ms, rss };
  } finally {
    proc.kill('SIGTERM');
    await exited;
  }
}
