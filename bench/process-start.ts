import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchInventory } from './inventory.js';
import { seedPool } from './pool.js';
import { SEED_REQUEST } from './quote-create.js';
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
  /** The server on PostgreSQL with section 1's 10,000 nodes and 100,000 leases, after 20 quotes: RSS / peak, bytes. */
  readonly atScale: { readonly nodes: number; readonly leases: number; readonly rss: number; readonly peak: number; readonly quoteP50: number } | null;
}

/**
 * The real `leasehold serve` as an operator starts it (demo inventory, embedded store): how soon it answers, on a
 * new data directory and on one it used before, and what it holds in memory when idle.
 */
export async function benchProcess(adminUrl: string | null, scale: { nodes: number; leases: number }): Promise<ProcessResult> {
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
  const atScale = adminUrl ? await serverAtScale(adminUrl, scale) : null;
  return { fresh: summarize(fresh), restart: summarize(restart), idleRss, idlePeak, atScale };
}

/**
 * `leasehold serve` over a PostgreSQL database seeded as section 1's (its simulated driver given the same nodes
 * through a file), answering quotes of the seed request: its resident memory with a large inventory loaded in its
 * planning index (the database's memory is the server's, not this process's).
 */
async function serverAtScale(adminUrl: string, scale: { nodes: number; leases: number }) {
  const pool = await seedPool('postgres', adminUrl, { ...scale, raceNodes: 0 });
  const dataDir = ownedDataDir(PREFIX.server);
  const nodesFile = join(dataDir, 'nodes.json');
  writeFileSync(nodesFile, JSON.stringify(benchInventory(scale.nodes, 0)));
  const env = { DATABASE_URL: pool.db.url!, LEASEHOLD_SIMULATED_NODES: `@${nodesFile}`, LEASEHOLD_SIMULATED_TIMINGS: '{"powerMs":5,"cleanMs":20}' };
  const proc = start(dataDir, env);
  try {
    const url = await proc.url;
    const quotes: number[] = [];
    const H = 3_600_000;
    const base = Math.ceil(Date.now() / H) * H;
    for (let i = 0; i < 22; i++) {
      const started = performance.now();
      const res = await fetch(`${url}/v1/leases/quote`, {
        method: 'POST',
        headers: { authorization: `Bearer ${pool.lesseeTokens[0]}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...SEED_REQUEST, start: new Date(base + (i % 84) * 4 * H).toISOString() }),
      });
      await res.text();
      if (res.status !== 200) throw new Error(`quote through leasehold serve: HTTP ${res.status}`);
      if (i >= 2) quotes.push(performance.now() - started);
    }
    await sleep(IDLE_MS);
    const [rss, peak] = memoryOf(proc.pid);
    return { ...scale, rss, peak, quoteP50: summarize(quotes).p50 };
  } finally {
    await proc.stop();
    rmSync(dataDir, { recursive: true, force: true });
    await pool.close();
  }
}

function memoryOf(pid: number | undefined): [number, number] {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return [kb('VmRSS'), kb('VmHWM')];
}

async function serve(dataDir: string, readMemory: boolean): Promise<{ ms: number; rss: [number, number] | null }> {
  const started = performance.now();
  const proc = start(dataDir, {});
  try {
    const url = await proc.url;
    for (;;) {
      const res = await fetch(`${url}/healthz`).catch(() => null);
      if (res?.status === 200) break;
      await sleep(5);
    }
    const ms = performance.now() - started;
    if (!readMemory) return { ms, rss: null };
    await sleep(IDLE_MS);
    return { ms, rss: memoryOf(proc.pid) };
  } finally {
    await proc.stop();
  }
}

/** Spawns `leasehold serve --port 0` on `dataDir` with `env`; `url` resolves once it says where it listens. */
function start(dataDir: string, env: Record<string, string>) {
  const proc = spawn(process.execPath, [LEASEHOLD_BIN, 'serve', '--port', '0'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? tmpdir(), LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  let out = '';
  const url = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`leasehold serve did not listen within 120 s:\n${out.slice(-2000)}`)), 120_000);
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
  url.catch(() => undefined);
  return {
    url,
    pid: proc.pid,
    async stop() {
      proc.kill('SIGTERM');
      await exited;
    },
  };
}
