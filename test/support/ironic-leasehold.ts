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
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Figures } from './figures.js';
import { sleep, type Api } from './http.js';
import { startIronic, type IronicHandle, type IronicNodeSpec } from './ironic.js';
import { startLeaseholdServer, type LeaseholdServer } from './server.js';

export const ADMIN_TOKEN = 'lh_ironic-e2e-admin-token-0123456789abcdef';

export interface LeaseholdOnIronic extends LeaseholdServer {
  readonly ironic: IronicHandle;
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
  const server = await startLeaseholdServer({
    LEASEHOLD_DRIVER: 'ironic',
    IRONIC_URL: ironic.url,
    ...(ironic.auth
      ? { IRONIC_AUTH_TYPE: 'http_basic', IRONIC_USERNAME: ironic.auth.user, IRONIC_PASSWORD: ironic.auth.password }
      : { IRONIC_AUTH_TYPE: 'none' }),
    LEASEHOLD_ADMIN_TOKEN: ADMIN_TOKEN,
    LEASEHOLD_SYNC_INTERVAL: '2s',
    LEASEHOLD_RECONCILE_INTERVAL: '2s',
    LEASEHOLD_LOG_LEVEL: 'info',
    ...opts.env,
  });
  return Object.assign(Object.create(Object.getPrototypeOf(server) as object, Object.getOwnPropertyDescriptors(server)) as LeaseholdServer, { ironic });
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


// ------------------------------------------------------------------------------------------------ a whole suite

export interface IronicSuite {
  readonly ironic: IronicHandle;
  readonly lh: LeaseholdOnIronic;
  readonly watch: IronicWatch;
  /** A member of the project owning every node, which has offered them all (max lease 1 day). */
  readonly owner: Api;
  /** A member of another project, leasing. */
  readonly tenant: Api;
  /** Ironic's uuid of each node, by name. */
  readonly uuid: Readonly<Record<string, string>>;
}

/**
 * The set-up most real-Ironic suites share, as vitest hooks: one Ironic with `nodes` enrolled, one `leasehold
 * serve` in front of it, the owner's offers, a watcher on Ironic; the server's log tail printed when a test fails;
 * everything stopped after the suite. The handle is filled in by beforeAll.
 */
export function useIronicSuite(
  nodes: readonly IronicNodeSpec[],
  opts: {
    readonly ironic?: Parameters<typeof startIronic>[0];
    readonly env?: Record<string, string>;
    readonly owner: readonly [project: string, user: string];
    readonly tenant: readonly [project: string, user: string];
    readonly figures?: Figures;
  },
): IronicSuite {
  const suite = {} as { -readonly [K in keyof IronicSuite]: IronicSuite[K] };
  const uuid: Record<string, string> = {};
  suite.uuid = uuid;
  beforeAll(async () => {
    suite.ironic = await startIronic(opts.ironic);
    const ids = await suite.ironic.enroll([...nodes]);
    nodes.forEach((n, i) => (uuid[n.name] = ids[i]!));
    suite.lh = await startLeasehold(suite.ironic, { env: opts.env });
    suite.owner = await suite.lh.member(...opts.owner);
    suite.tenant = await suite.lh.member(...opts.tenant);
    for (const n of nodes) await suite.owner.ok('POST', '/v1/offers', { node_id: n.name, max_lease_duration: '1d' });
    suite.watch = new IronicWatch(suite.ironic, 20).start();
  });
  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') console.log(`---- leasehold log (tail) ----\n${suite.lh?.logTail(80)}`);
  });
  afterAll(async () => {
    opts.figures?.report();
    await suite.watch?.stop();
    await suite.lh?.stop();
    await suite.ironic?.stop();
  });
  return suite;
}
