/**
 * Leasehold (the real server process, LEASEHOLD_DRIVER=ironic) in front of a real standalone Ironic, for the
 * end-to-end suites under test/ironic/*.ironic.ts: start and restart the server, call its API as a user, watch
 * what Ironic shows (every few tens of milliseconds, with the time each change was first seen), and report
 * figures (`[figures]` lines; JSON in $LEASEHOLD_FIGURES_FILE when set).
 *
 *   const ironic = await startIronic({ auth: 'http_basic' });
 *   const uuids = await ironic.enroll(nodes);
 *   const lh = await startLeasehold(ironic);
 *   const ada = await lh.member('astro', 'ada');
 *   const watch = new IronicWatch(ironic).start();
 *   const lease = await ada.ok('POST', '/v1/leases', { nodes: ['gpu-1'], duration: '5s' });
 *   const seen = await watch.waitFor(uuids[0], (n) => n.lessee === lease.project_id);
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IronicHandle, IronicNodeSpec } from './ironic.js';
import { startServerProcess, type ServerProcess } from './processes.js';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` until it is true; throws naming `what` after `timeoutMs`. */
export async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string, intervalMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(intervalMs);
  }
}

// ------------------------------------------------------------------------------------------------ the API

export interface ApiResponse<T = any> {
  status: number;
  body: T;
}

/** A caller of Leasehold's API with one token. The URL is read at each call: it follows server restarts. */
export class Api {
  constructor(
    private readonly baseUrl: () => string,
    readonly token: string,
    readonly name: string,
  ) {}

  get url(): string {
    return this.baseUrl();
  }

  /** LEASEHOLD_URL and LEASEHOLD_TOKEN, for the CLI (test/support/processes.ts cli/cliJson). */
  get cliEnv(): Record<string, string> {
    return { LEASEHOLD_URL: this.baseUrl(), LEASEHOLD_TOKEN: this.token };
  }

  async call<T = any>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
    const res = await fetch(this.baseUrl() + path, {
      method,
      headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON
    }
    return { status: res.status, body: parsed as T };
  }

  /** call(), but anything other than a 2xx throws with the server's answer. */
  async ok<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.call<T>(method, path, body);
    if (res.status < 200 || res.status >= 300) {
      throw new Error(`${this.name}: ${method} ${path} → ${res.status}: ${JSON.stringify(res.body)}`);
    }
    return res.body;
  }

  /** Every event matching the query string (all pages), oldest first. */
  async events(query: Record<string, string>): Promise<any[]> {
    const out: any[] = [];
    let path: string | null = `/v1/events?${new URLSearchParams({ limit: '1000', ...query }).toString()}`;
    while (path) {
      const page: { events: any[]; next: string | null } = await this.ok('GET', path);
      out.push(...page.events);
      path = page.next;
    }
    return out.reverse();
  }
}

// ------------------------------------------------------------------------------------------------ the server

export const ADMIN_TOKEN = 'lh_ironic-e2e-admin-token-0123456789abcdef';

export interface LeaseholdOnIronic {
  readonly ironic: IronicHandle;
  readonly dataDir: string;
  /** The environment the server runs with (restart() uses it again). */
  readonly env: Readonly<Record<string, string>>;
  readonly url: string;
  readonly server: ServerProcess;
  readonly admin: Api;
  api(token: string, name?: string): Api;
  /** Creates the project (unless it exists), a user in it and a token: an Api acting as that user. */
  member(project: string, user: string, role?: 'reader' | 'member' | 'manager'): Promise<Api>;
  /** SIGKILL, and wait until the process is gone. */
  kill(): Promise<void>;
  /** Starts the server again on the same data dir and environment; resolves to ms until it listened. */
  restart(): Promise<number>;
  /** SIGTERM; resolves to the exit code (null if it was killed). Removes the data dir unless keepData. */
  stop(opts?: { keepData?: boolean }): Promise<number | null>;
  /** Everything the server printed, across restarts (JSON log lines, for failure messages). */
  logTail(lines?: number): string;
}

export interface StartLeaseholdOptions {
  /** Extra or overriding environment variables. */
  env?: Record<string, string>;
}

/**
 * Starts `leasehold serve` with LEASEHOLD_DRIVER=ironic against `ironic` (http_basic when the Ironic uses it),
 * a fresh embedded store (or DATABASE_URL if given in env), no cleaning gap, and 2 s inventory sync and
 * reconcile intervals.
 */
export async function startLeasehold(ironic: IronicHandle, opts: StartLeaseholdOptions = {}): Promise<LeaseholdOnIronic> {
  const dataDir = mkdtempSync(join(tmpdir(), 'leasehold-on-ironic-'));
  const env: Record<string, string> = {
    LEASEHOLD_DRIVER: 'ironic',
    IRONIC_URL: ironic.url,
    ...(ironic.auth
      ? { IRONIC_AUTH_TYPE: 'http_basic', IRONIC_USERNAME: ironic.auth.user, IRONIC_PASSWORD: ironic.auth.password }
      : { IRONIC_AUTH_TYPE: 'none' }),
    LEASEHOLD_DATA_DIR: dataDir,
    LEASEHOLD_ADMIN_TOKEN: ADMIN_TOKEN,
    LEASEHOLD_CLEANING_GAP: '0s',
    LEASEHOLD_SYNC_INTERVAL: '2s',
    LEASEHOLD_RECONCILE_INTERVAL: '2s',
    LEASEHOLD_LOG_LEVEL: 'info',
    ...opts.env,
  };
  let earlierOutput = '';
  let stderr = '';
  /** Starts the process and keeps its stderr and how it exited (startServerProcess keeps stdout only). */
  const launch = async () => {
    const started = await startServerProcess(env, 60_000);
    started.proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    started.proc.once('exit', (code, signal) => {
      if (signal !== 'SIGKILL' && code !== 0) stderr += `\n[leasehold exited: code ${code}, signal ${signal}]\n`;
    });
    return started;
  };
  let server = await launch();
  const url = () => server.url;
  const api = (token: string, name = 'caller') => new Api(url, token, name);
  const admin = api(ADMIN_TOKEN, 'admin');
  const projects = new Map<string, string>();

  const handle: LeaseholdOnIronic = {
    ironic,
    dataDir,
    env,
    get url() {
      return server.url;
    },
    get server() {
      return server;
    },
    admin,
    api,
    async member(project, user, role = 'member') {
      let projectId = projects.get(project);
      if (!projectId) {
        const found = await admin.call('GET', `/v1/projects/${encodeURIComponent(project)}`);
        projectId = found.status === 200 ? (found.body.id as string) : (await admin.ok('POST', '/v1/projects', { name: project })).id;
        projects.set(project, projectId!);
      }
      const u = await admin.ok('POST', '/v1/users', { name: user, project_id: projectId, role });
      const token = (await admin.ok('POST', '/v1/tokens', { user_id: u.id })).token as string;
      return api(token, `${user}@${project}`);
    },
    async kill() {
      if (server.proc.exitCode !== null || server.proc.signalCode !== null) return;
      const gone = new Promise((resolve) => server.proc.once('exit', resolve));
      server.kill();
      await gone;
    },
    async restart() {
      if (server.proc.exitCode === null && server.proc.signalCode === null) await handle.stop({ keepData: true });
      earlierOutput += server.output();
      const t0 = performance.now();
      server = await launch();
      return Math.round(performance.now() - t0);
    },
    async stop(o = {}) {
      let code: number | null = server.proc.exitCode;
      if (code === null && server.proc.signalCode === null) code = await server.stop();
      if (!o.keepData) rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
    logTail(lines = 60) {
      const out = (earlierOutput + server.output()).trimEnd().split('\n').slice(-lines).join('\n');
      return stderr.trim() ? `${out}\n---- stderr ----\n${stderr.trimEnd().split('\n').slice(-lines).join('\n')}` : out;
    },
  };
  return handle;
}

// ------------------------------------------------------------------------------------------------ Ironic, watched

/** What the watcher reads of each node (one list request per poll). */
export interface WatchedNode {
  uuid: string;
  name: string | null;
  lessee: string | null;
  owner: string | null;
  provision_state: string;
  target_provision_state: string | null;
  provision_updated_at: string | null;
  power_state: string | null;
  target_power_state: string | null;
  last_error: string | null;
  maintenance: boolean;
  extra: Record<string, unknown>;
}

const WATCH_FIELDS = [
  'uuid',
  'name',
  'lessee',
  'owner',
  'provision_state',
  'target_provision_state',
  'provision_updated_at',
  'power_state',
  'target_power_state',
  'last_error',
  'maintenance',
  'extra',
].join(',');

export interface Observation {
  /** Date.now() when the answer carrying this state arrived. */
  readonly at: number;
  readonly node: WatchedNode;
}

/**
 * Polls Ironic's node list (`GET /v1/nodes?fields=…`, one request for every node) every `intervalMs` and keeps,
 * per node, each distinct state with the time it was first seen. A change is seen at most one interval (plus one
 * request) after it happened, so the figures it gives are upper bounds with that resolution. Polls that fail
 * (Ironic down) are skipped.
 */
export class IronicWatch {
  private readonly history = new Map<string, Observation[]>();
  private readonly waiters = new Set<() => void>();
  private running = false;
  private loop: Promise<void> | null = null;
  polls = 0;
  failedPolls = 0;

  constructor(
    private readonly ironic: IronicHandle,
    private intervalMs = 20,
  ) {}

  start(): this {
    if (this.running) return this;
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        const t0 = Date.now();
        await this.pollOnce();
        const rest = this.intervalMs - (Date.now() - t0);
        if (rest > 0) await sleep(rest);
      }
    })();
    return this;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    for (const w of this.waiters) w();
  }

  /** Changes the polling interval from the next poll on. */
  setInterval(ms: number): void {
    this.intervalMs = ms;
  }

  private async pollOnce(): Promise<void> {
    this.polls++;
    let nodes: WatchedNode[];
    try {
      const res = await this.ironic.request<{ nodes: WatchedNode[] }>('GET', `/v1/nodes?limit=1000&fields=${WATCH_FIELDS}`);
      nodes = res.body.nodes;
    } catch {
      this.failedPolls++;
      return;
    }
    const at = Date.now();
    for (const node of nodes) {
      const list = this.history.get(node.uuid);
      const last = list?.[list.length - 1];
      if (last && sameState(last.node, node)) continue;
      if (list) list.push({ at, node });
      else this.history.set(node.uuid, [{ at, node }]);
    }
    for (const w of [...this.waiters]) w();
  }

  /** The latest state seen of a node (undefined before the first poll that listed it). */
  latest(uuid: string): WatchedNode | undefined {
    const list = this.history.get(uuid);
    return list?.[list.length - 1]?.node;
  }

  /** Every distinct state seen of the node since `since` (ms epoch), oldest first. */
  seen(uuid: string, since = 0): Observation[] {
    return (this.history.get(uuid) ?? []).filter((o) => o.at >= since);
  }

  /**
   * When the node was first seen matching `pred` at or after `since`, or null. The state that was current at
   * `since` counts (as seen at `since`).
   */
  firstSeen(uuid: string, pred: (n: WatchedNode) => boolean, since = 0): number | null {
    const list = this.history.get(uuid) ?? [];
    let i = 0;
    while (i + 1 < list.length && list[i + 1]!.at <= since) i++;
    for (; i < list.length; i++) {
      const o = list[i]!;
      if (pred(o.node)) return Math.max(o.at, since);
    }
    return null;
  }

  /** Waits until the node is seen matching `pred` (at or after `since`); resolves to when it was first seen. */
  waitFor(uuid: string, pred: (n: WatchedNode) => boolean, opts: { since?: number; timeoutMs?: number; what?: string } = {}): Promise<number> {
    const since = opts.since ?? 0;
    const timeoutMs = opts.timeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      const check = () => {
        const at = this.firstSeen(uuid, pred, since);
        if (at !== null) {
          cleanup();
          resolve(at);
        } else if (!this.running) {
          cleanup();
          reject(new Error(`watch stopped while waiting for ${opts.what ?? 'a state'} of node ${uuid}`));
        }
      };
      const timer = setTimeout(() => {
        cleanup();
        const last = this.latest(uuid);
        reject(
          new Error(
            `node ${last?.name ?? uuid} not seen ${opts.what ?? 'in the state waited for'} within ${timeoutMs} ms; last seen: ` +
              JSON.stringify(last ?? null),
          ),
        );
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  /** waitFor on several nodes; resolves to the times in the same order. */
  waitForAll(uuids: readonly string[], pred: (n: WatchedNode) => boolean, opts: { since?: number; timeoutMs?: number; what?: string } = {}): Promise<number[]> {
    return Promise.all(uuids.map((u) => this.waitFor(u, pred, opts)));
  }
}

function sameState(a: WatchedNode, b: WatchedNode): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * "Cleaned and back": `available`, settled, and a provision state change after the snapshot `before` (taken at
 * the lease's end) — so a node that was available before and still is does not count until Ironic cleaned it.
 */
export function availableAgain(before: WatchedNode | undefined) {
  return (n: WatchedNode) =>
    n.provision_state === 'available' &&
    n.target_provision_state === null &&
    n.provision_updated_at !== (before?.provision_updated_at ?? null);
}

// ------------------------------------------------------------------------------------------------ nodes

/** Realistic Ironic properties for a fake-hardware node. */
export function nodeSpec(
  name: string,
  shape: { memory_gib: number; cpus: number; local_gb: number; gpus?: number; arch?: string; gpu_model?: string },
  extra: { owner?: string; traits?: string[]; resource_class?: string } = {},
): IronicNodeSpec {
  const gpus = shape.gpus ?? 0;
  return {
    name,
    resource_class: extra.resource_class ?? (gpus > 0 ? 'baremetal.gpu' : 'baremetal.general'),
    properties: {
      memory_mb: shape.memory_gib * 1024,
      cpus: shape.cpus,
      local_gb: shape.local_gb,
      cpu_arch: shape.arch ?? 'x86_64',
      gpus,
      ...(shape.gpu_model ? { gpu_model: shape.gpu_model } : {}),
      capabilities: gpus > 0 ? 'boot_mode:uefi,secure_boot:true,cpu_vt:true' : 'boot_mode:uefi,cpu_vt:true',
    },
    traits: extra.traits ?? [],
    ...(extra.owner ? { owner: extra.owner } : {}),
    driver_info: { ipmi_address: '192.0.2.10', ipmi_username: 'root', ipmi_password: 'bmc-secret-never-shown' },
  };
}

// ------------------------------------------------------------------------------------------------ figures

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
