/**
 * What idle serial-console connections cost a server (issue 11, defect 6): starts a real `leasehold serve`
 * (simulated driver, embedded PGlite, a fresh data directory), measures its CPU and `GET /v1/me` latency with no
 * console open, then opens N console WebSockets held by lessees (10 users of one project, 5 console URLs each,
 * spread over the 4 nodes of one lease) and measures the same again while they sit idle. Last, it moves the lease's
 * end to 3 s from now and reports how long after that end the connections were cut (4410).
 *
 *   npx tsx scripts/console-idle-bench.ts [--checkout DIR] [--connections 200] [--seconds 30]
 *
 * `--checkout` runs another checkout's build (DIR/bin/leasehold.js, after `npm run build:server` there), to compare
 * before and after. Prints one line per phase and the figures as JSON. Not part of `npm test`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';

const { values } = parseArgs({
  options: {
    checkout: { type: 'string', default: resolve(import.meta.dirname, '..') },
    connections: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '30' },
  },
});
const checkout = resolve(values.checkout!);
const connections = Number(values.connections);
const seconds = Number(values.seconds);
const ADMIN = 'lh_console-idle-bench-admin-token-0123456789abcdef';
const USERS = 10;
const URLS_PER_USER = 5;
/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS = 100;

interface Phase {
  readonly connections: number;
  readonly cpu_percent: number;
  readonly me_p50_ms: number;
  readonly me_p99_ms: number;
  readonly me_max_ms: number;
  readonly samples: number;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'lh-console-bench-'));
  const server = await startServer(dataDir);
  const sockets: WebSocket[] = [];
  try {
    const api = client(server.url);
    const idle = await measure(server.process, api, 0);
    report('no console open', idle);
    const urls = await consoleUrls(api);
    for (let i = 0; i < connections; i++) sockets.push(await openSocket(urls.urls[i % urls.urls.length]!));
    await new Promise((r) => setTimeout(r, 3_000)); // consoles turned on and bridged
    const closed = sockets.filter((s) => s.readyState !== WebSocket.OPEN).length;
    if (closed > 0) throw new Error(`${closed} of ${connections} console connections were closed before the measurement`);
    const busy = await measure(server.process, api, connections);
    report(`${connections} idle consoles`, busy);
    const stillOpen = sockets.filter((s) => s.readyState === WebSocket.OPEN).length;
    const cut = await cutAtEnd(api, urls.leaseId, sockets);
    console.log(
      `lease end moved 3 s ahead: ${cut.closed_4410} of ${sockets.length} cut with 4410, ` +
        `${cut.p50_ms.toFixed(0)} ms after the end at p50, ${cut.max_ms.toFixed(0)} ms at most`,
    );
    console.log(JSON.stringify({ checkout, seconds, still_open: stillOpen, phases: [idle, busy], cut }));
  } finally {
    for (const socket of sockets) socket.terminate();
    server.process.kill('SIGTERM');
    await new Promise((r) => server.process.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function report(what: string, p: Phase): void {
  console.log(
    `${what}: CPU ${p.cpu_percent.toFixed(1)} % over ${seconds} s; GET /v1/me p50 ${p.me_p50_ms.toFixed(1)} ms, ` +
      `p99 ${p.me_p99_ms.toFixed(1)} ms, max ${p.me_max_ms.toFixed(1)} ms (${p.samples} requests)`,
  );
}

async function startServer(dataDir: string): Promise<{ url: string; process: ChildProcess }> {
  const child = spawn(process.execPath, [join(checkout, 'bin/leasehold.js'), 'serve', '--port', '0'], {
    env: {
      ...process.env,
      LEASEHOLD_DATA_DIR: dataDir,
      LEASEHOLD_ADMIN_TOKEN: ADMIN,
      LEASEHOLD_DRIVER: 'simulated',
      LEASEHOLD_LOG_LEVEL: 'warn',
      LEASEHOLD_CLEANING_GAP: '0s',
      LEASEHOLD_SIMULATED_TIMINGS: JSON.stringify({ powerMs: 10, consoleMs: 10, bootOutputMs: 0 }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /Leasehold listening on (http:\/\/\S+)/.exec(out);
      if (match) resolveUrl(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`leasehold serve exited (${code}) before listening: ${out}`)));
  });
  child.stdout!.resume();
  return { url, process: child };
}

type Api = (method: string, path: string, body?: unknown, token?: string) => Promise<any>;

function client(base: string): Api {
  return async (method, path, body, token = ADMIN) => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
}

/** Lessees with console URLs: 10 members of `bench`, one lease on four physics-lab nodes, 5 URLs per member. */
async function consoleUrls(api: Api): Promise<{ urls: string[]; leaseId: string }> {
  await api('POST', '/v1/projects', { name: 'physics-lab' });
  const bench = await api('POST', '/v1/projects', { name: 'bench' });
  const nodes = (await api('GET', '/v1/nodes?limit=1000')).nodes as Array<{ id: string; name: string; owner: string | null }>;
  const leased = nodes.filter((n) => n.owner === 'physics-lab').slice(0, 4);
  for (const node of leased) await api('POST', '/v1/offers', { node_id: node.id });
  const tokens: string[] = [];
  for (let i = 0; i < USERS; i++) {
    const user = await api('POST', '/v1/users', { name: `bench-${i}`, project_id: bench.id, role: 'member' });
    tokens.push((await api('POST', '/v1/tokens', { user_id: user.id })).token);
  }
  const lease = await api('POST', '/v1/leases', { nodes: leased.map((n) => n.id), duration: '1d' }, tokens[0]);
  // The engine starts the lease at once; access follows the lease table.
  await new Promise((r) => setTimeout(r, 1_000));
  const urls: string[] = [];
  for (let u = 0; u < URLS_PER_USER; u++) {
    for (let i = 0; i < USERS; i++) {
      const node = leased[(u * USERS + i) % leased.length]!;
      urls.push((await api('POST', `/v1/nodes/${node.id}/console`, undefined, tokens[i])).url);
    }
  }
  return { urls, leaseId: lease.id };
}

/** Moves the lease's end 3 s ahead (as its lessee could) and times the close of every connection against it. */
async function cutAtEnd(api: Api, leaseId: string, sockets: WebSocket[]): Promise<{ closed_4410: number; p50_ms: number; max_ms: number }> {
  const end = new Date(Date.now() + 3_000);
  await api('PATCH', `/v1/leases/${leaseId}`, { end: end.toISOString() });
  const closes = await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<{ code: number; at: number }>((resolveClose) => {
          if (ws.readyState === WebSocket.CLOSED) return resolveClose({ code: 0, at: Date.now() });
          ws.once('close', (code: number) => resolveClose({ code, at: Date.now() }));
        }),
    ),
  );
  const late = closes.map((c) => c.at - end.getTime()).sort((a, b) => a - b);
  return { closed_4410: closes.filter((c) => c.code === 4410).length, p50_ms: late[Math.floor(late.length / 2)]!, max_ms: late.at(-1)! };
}

function openSocket(url: string): Promise<WebSocket> {
  return new Promise((resolveSocket, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => resolveSocket(ws));
    ws.once('error', reject);
    ws.on('message', () => undefined);
  });
}

function cpuTicks(pid: number): number {
  // /proc/<pid>/stat: fields after the command name (which may hold spaces); utime and stime are the 14th and 15th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU of the server process over `seconds`, while one client asks `GET /v1/me` every 100 ms. */
async function measure(child: ChildProcess, api: Api, open: number): Promise<Phase> {
  const startTicks = cpuTicks(child.pid!);
  const started = performance.now();
  const latencies: number[] = [];
  while (performance.now() - started < seconds * 1000) {
    const t = performance.now();
    await api('GET', '/v1/me');
    latencies.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 100));
  }
  const elapsed = (performance.now() - started) / 1000;
  const cpu = ((cpuTicks(child.pid!) - startTicks) / TICKS / elapsed) * 100;
  latencies.sort((a, b) => a - b);
  const pick = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { connections: open, cpu_percent: cpu, me_p50_ms: pick(0.5), me_p99_ms: pick(0.99), me_max_ms: latencies.at(-1)!, samples: latencies.length };
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
