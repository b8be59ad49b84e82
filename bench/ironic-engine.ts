import { type Sizes } from './options.js';
import { ADMIN_TOKEN, api, call, enrol, localMember, startIronic, startLeasehold, type Call, type Cleanups } from './gateway-setup.js';
import { until } from './stack-processes.js';
import { sleep, summarize, type LatencySummary } from './stats.js';

const OWNERS = 'engine-bench-owners';
/** The direct comparison sends this many PATCHes at once (what Ironic does best with: ≈ 30/s). */
const DIRECT_CONCURRENCY = 20;

export interface IronicEngineResult {
  readonly nodes: number;
  /** Per 4-node lease started alone: ms from its start to Ironic's lessee set on all 4 (audit log times). */
  readonly startIdle: LatencySummary;
  /** A 4-node lease starting at the same instant as a lease of `burst` nodes: its ms to all 4 lessees set. */
  readonly startInBurst: LatencySummary;
  /** The burst lease's own: start → lessee set on all its nodes (s). */
  readonly burstSetS: number;
  readonly burst: number;
  /** All the burst's nodes ending at one instant: end → lessee cleared on all (s, audit log), and the first (ms). */
  readonly clearAllS: number;
  readonly clearFirstMs: number;
  /** The same PATCHes (lessee + mark) sent straight to Ironic, DIRECT_CONCURRENCY at a time (s). */
  readonly directSetS: number;
  readonly directClearS: number;
  readonly directConcurrency: number;
}

/**
 * The lease engine against a real Ironic (the `leasehold serve` process, embedded store): how soon Ironic shows a
 * lease's lessee after its start, alone and while a large hand-over runs, and how soon a large number of ends
 * clear it, against the same PATCHes sent straight to Ironic.
 */
export async function benchIronicEngine(sizes: Sizes, cleanups: Cleanups, progress: (message: string) => void): Promise<IronicEngineResult> {
  const burst = sizes.engineBurst;
  const probes = sizes.engineProbes;
  const ironicUrl = await startIronic(['--auth', 'noauth'], cleanups);
  const ironic: Call = (method, path, body) => call(`${ironicUrl}${path}`, method, {}, body);
  const total = 4 * (probes + 1) + burst;
  progress(`4 [engine]: enrolling ${total} nodes in Ironic`);
  const names = Array.from({ length: total }, (_, i) => `eng-${String(i).padStart(4, '0')}`);
  for (let i = 0; i < names.length; i += 8) await Promise.all(names.slice(i, i + 8).map((n) => enrol(ironic, n, OWNERS)));
  const server = await startLeasehold({ IRONIC_URL: ironicUrl, IRONIC_AUTH_TYPE: 'none', LEASEHOLD_ADMIN_TOKEN: ADMIN_TOKEN }, cleanups);
  const owner = await localMember(server.url, OWNERS);
  const as = (method: string, path: string, body?: unknown) => api(server.url, owner.token, method, path, body);
  await until(async () => (await api(server.url, ADMIN_TOKEN, 'GET', '/v1/nodes?limit=1000')).nodes.length >= total, 60_000, 'the inventory synced');

  /** ms from the lease's start to its last `allocation.started` (Ironic answered the lessee PATCH). */
  const handOver = async (lease: { id: string; start: string }, count: number) => {
    const path = `/v1/events?lease_id=${lease.id}&type=allocation.started&limit=1000`;
    await until(async () => (await as('GET', path)).events.length >= count, 120_000, `lease ${lease.id} handed over`);
    const events: Array<{ at: string }> = (await as('GET', path)).events;
    return Math.max(...events.map((e) => Date.parse(e.at))) - Date.parse(lease.start);
  };

  progress(`4 [engine]: ${probes} leases of 4 nodes starting one at a time`);
  const idle: number[] = [];
  for (let i = 0; i < probes; i++) {
    const lease = await as('POST', '/v1/leases', { nodes: names.slice(4 * i, 4 * i + 4), duration: '1h' });
    idle.push(await handOver(lease, 4));
  }

  progress(`4 [engine]: a lease of 4 nodes starting with a lease of ${burst}`);
  const start = new Date(Math.ceil((Date.now() + 3_000) / 1000) * 1000).toISOString();
  const big = await as('POST', '/v1/leases', { nodes: names.slice(4 * (probes + 1)), start, duration: '1h' });
  const small = await as('POST', '/v1/leases', { nodes: names.slice(4 * probes, 4 * probes + 4), start, duration: '1h' });
  const inBurst = await handOver(small, 4);
  const burstSet = await handOver(big, burst);
  await until(async () => (await as('GET', `/v1/leases/${big.id}`)).state === 'active', 60_000, 'the burst lease active');

  progress(`4 [engine]: ${burst} ends at one instant`);
  const shortened = await as('PATCH', `/v1/leases/${big.id}`, { end: new Date(Date.now() + 2_000).toISOString() });
  const end = Date.parse(shortened.end);
  const clearedPath = `/v1/events?lease_id=${big.id}&type=node.lessee_cleared&limit=1000`;
  await until(async () => (await as('GET', clearedPath)).events.length >= burst, 240_000, 'every lessee cleared');
  const cleared: number[] = (await as('GET', clearedPath)).events.map((e: { at: string }) => Date.parse(e.at) - end);
  await until(async () => (await as('GET', `/v1/leases/${big.id}`)).state === 'ended', 300_000, 'the burst lease ended');

  progress(`4 [engine]: the same ${burst} PATCHes straight to Ironic, ${DIRECT_CONCURRENCY} at a time`);
  const uuids: string[] = (await api(server.url, ADMIN_TOKEN, 'GET', '/v1/nodes?limit=1000')).nodes
    .filter((n: { name: string }) => names.slice(4 * (probes + 1)).includes(n.name))
    .map((n: { id: string }) => n.id);
  const patch = (ops: unknown) => (id: string) => ironicPatch(ironic, id, ops);
  const directSet = await concurrently(uuids, DIRECT_CONCURRENCY, patch([
    { op: 'add', path: '/lessee', value: 'direct-lessee' },
    { op: 'add', path: '/extra/leasehold_lease', value: 'direct-lease' },
  ]));
  const directClear = await concurrently(uuids, DIRECT_CONCURRENCY, patch([
    { op: 'remove', path: '/lessee' },
    { op: 'remove', path: '/extra/leasehold_lease' },
  ]));
  return {
    nodes: total,
    startIdle: summarize(idle),
    startInBurst: summarize([inBurst]),
    burstSetS: burstSet / 1000,
    burst,
    clearAllS: Math.max(...cleared) / 1000,
    clearFirstMs: Math.min(...cleared),
    directSetS: directSet / 1000,
    directClearS: directClear / 1000,
    directConcurrency: DIRECT_CONCURRENCY,
  };
}

async function ironicPatch(ironic: Call, id: string, ops: unknown): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const reply = await ironic('PATCH', `/v1/nodes/${id}`, ops);
    if (reply.status < 300) return;
    if (reply.status !== 409 || attempt > 20) throw new Error(`Ironic PATCH ${id} → ${reply.status}: ${reply.text.slice(0, 300)}`);
    await sleep(50);
  }
}

/** Runs `task` over `items`, `concurrency` at a time; resolves to the wall time in ms. */
async function concurrently<T>(items: readonly T[], concurrency: number, task: (item: T) => Promise<void>): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) await task(items[next++]!);
  }));
  return performance.now() - started;
}
