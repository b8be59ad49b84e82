/**
 * Engine throughput against a real Ironic: 200 nodes handed over and taken back at one instant by the real
 * `leasehold serve` process, compared with the same lessee PATCHes sent straight to Ironic. Runs alone (the
 * `ironic-figures` project, after every other suite) so the figures are not measured on a busy machine.
 *
 * LEASEHOLD_FIGURES_NODES changes the node count (default 200); LEASEHOLD_FIGURES_STORE=postgres runs the server
 * on a fresh PostgreSQL database (on the server of LEASEHOLD_TEST_DATABASE_URL) instead of the embedded PGlite.
 * Prints `[figures]` lines; with LEASEHOLD_FIGURES_FILE set they are written there as JSON too.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ironicAvailable, startIronic, type IronicHandle } from '../support/ironic.js';
import { createTestDatabase, type TestDatabase } from '../support/postgres.js';
import { Figures, summarize } from '../support/figures.js';
import { until, type Api } from '../support/http.js';
import { IronicWatch, availableAgain, nodeSpec, startLeasehold, type LeaseholdOnIronic, type WatchedNode } from '../support/ironic-leasehold.js';

const avail = ironicAvailable();

const N = Number(process.env.LEASEHOLD_FIGURES_NODES || 200);
const STORE = process.env.LEASEHOLD_FIGURES_STORE === 'postgres' ? 'postgres' : 'pglite';
/** The lease engine's batch: tasks claimed (and run in parallel) at once (src/engine/lease-engine.ts). */
const ENGINE_BATCH = 20;
const WATCH_MS = 250;

const rate = (count: number, ms: number) => Math.round((count / (ms / 1000)) * 10) / 10;
const seconds = (ms: number) => Math.round(ms / 10) / 100;

/** Runs `task` over `items` with `concurrency` workers; resolves to the wall time in ms. */
async function withConcurrency<T>(items: readonly T[], concurrency: number, task: (item: T) => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return performance.now() - t0;
}

describe.skipIf(!avail.ok)(`lease engine throughput against a real Ironic (${N} nodes)`, () => {
  let ironic: IronicHandle;
  let lh: LeaseholdOnIronic;
  let watch: IronicWatch;
  let bea: Api;
  let uuids: string[] = [];
  let database: TestDatabase | undefined;
  const figures = new Figures(STORE === 'postgres' ? 'throughput_postgres' : 'throughput');

  beforeAll(async () => {
    ironic = await startIronic();
    const t0 = performance.now();
    uuids = await ironic.enroll(
      Array.from({ length: N }, (_, i) =>
        nodeSpec(`bulk-${String(i).padStart(3, '0')}`, { memory_gib: 64 * (1 + (i % 4)), cpus: 32, local_gb: 960 }, { owner: 'bulk-lab' }),
      ),
      { quick: true }, // straight into `available`: enrolment is not what is measured here
    );
    const enrollMs = performance.now() - t0;
    figures.add('enroll_nodes', `enrol ${N} nodes (created available, powered off, owner set; 8 parallel clients)`, { nodes: N, seconds: seconds(enrollMs), nodes_per_s: rate(N, enrollMs) });
    // The periodic inventory sync and reconcile passes each list every node: rarely, so they stay out of the figures.
    if (STORE === 'postgres') database = await createTestDatabase(undefined, 'leasehold_figures');
    figures.add('store', 'store', STORE);
    lh = await startLeasehold(ironic, {
      env: { LEASEHOLD_SYNC_INTERVAL: '5m', LEASEHOLD_RECONCILE_INTERVAL: '5m', ...(database ? { DATABASE_URL: database.url } : {}) },
    });
    bea = await lh.member('bulk-lab', 'bea');
    watch = new IronicWatch(ironic, WATCH_MS).start();
  });

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') console.log(`---- leasehold log (tail) ----\n${lh?.logTail(40)}`);
  });

  afterAll(async () => {
    figures.report();
    await watch?.stop();
    await lh?.stop();
    await database?.drop();
    await ironic?.stop();
  });

  it(`hands ${N} nodes over and takes them all back after one shared end instant, lessee cleared and cleaned in Ironic`, async () => {
    const { nodes } = await lh.admin.ok('GET', '/v1/nodes?limit=1000');
    expect(nodes).toHaveLength(N);

    // The owner leases its own nodes (no offer needed): one lease of N nodes, handed over at once.
    const lease = await bea.ok('POST', '/v1/leases', { name: 'bulk', nodes: uuids, duration: '30m' });
    const start = Date.parse(lease.start);
    const set = await watch.waitForAll(uuids, (n) => n.lessee === lease.project_id, { since: start - 1_000, timeoutMs: 120_000, what: 'with the lessee' });
    const lastSet = Math.max(...set) - start;
    figures.add('handover', `lease start → lessee set on all ${N} nodes (Ironic polled every ${WATCH_MS} ms)`, {
      seconds: seconds(lastSet),
      lessee_sets_per_s: rate(N, lastSet),
    });
    await until(async () => (await bea.ok('GET', `/v1/leases/${lease.id}`)).state === 'active', 30_000, 'the lease active');

    // Every allocation ends at one instant: the lease is shortened to end 2 s from now.
    const snapshot = new Map<string, WatchedNode | undefined>(uuids.map((id) => [id, watch.latest(id)]));
    const shortened = await bea.ok('PATCH', `/v1/leases/${lease.id}`, { end: new Date(Date.now() + 2_000).toISOString() });
    const end = Date.parse(shortened.end);

    const cleared = await watch.waitForAll(uuids, (n) => n.lessee === null, { since: end, timeoutMs: 180_000, what: 'with the lessee cleared' });
    const lastCleared = Math.max(...cleared) - end;
    const back = await Promise.all(
      uuids.map((id) => watch.waitFor(id, availableAgain(snapshot.get(id)), { since: end, timeoutMs: 240_000, what: 'cleaned and available' })),
    );
    const lastBack = Math.max(...back) - end;
    let endedAt = 0;
    await until(
      async () => {
        const l = await bea.ok('GET', `/v1/leases/${lease.id}`);
        if (l.state === 'ended') endedAt = Date.now();
        return l.state === 'ended';
      },
      120_000,
      'the lease ended',
      100,
    );

    // The audit log's times (written right after each Ironic call returned) give the per-node view.
    const clearedEvents = await bea.events({ lease_id: lease.id, type: 'node.lessee_cleared' });
    const released = await bea.events({ lease_id: lease.id, type: 'allocation.released' });
    expect(new Set(clearedEvents.map((e) => e.node_id)).size).toBe(N);
    expect(new Set(released.map((e) => e.node_id)).size).toBe(N);
    const clearedLog = clearedEvents.map((e) => Date.parse(e.at) - end);
    const releasedLog = released.map((e) => Date.parse(e.at) - end);

    figures.add('end_lessee_cleared', `end → lessee cleared on all ${N} nodes (seen in Ironic)`, {
      seconds: seconds(lastCleared),
      lessee_clears_per_s: rate(N, lastCleared),
      first_ms: Math.min(...cleared) - end,
    });
    figures.add('end_lessee_cleared_log', 'end → node.lessee_cleared per node (audit log)', summarize(clearedLog.map((ms) => ms / 1000)), 's');
    figures.add('end_available', `end → all ${N} nodes cleaned and available in Ironic`, {
      seconds: seconds(lastBack),
      releases_per_s: rate(N, lastBack),
    });
    figures.add('end_released_log', 'end → allocation.released per node (audit log)', summarize(releasedLog.map((ms) => ms / 1000)), 's');
    figures.add('end_lease_ended_s', 'end → Leasehold shows the lease ended', seconds(endedAt - end), 's');

    const final = await ironic.request<{ nodes: WatchedNode[] }>('GET', '/v1/nodes?limit=1000&fields=uuid,lessee,provision_state,power_state,extra');
    for (const node of final.body.nodes) {
      expect(node).toMatchObject({ lessee: null, provision_state: 'available', power_state: 'power off' });
      expect(node.extra).not.toHaveProperty('leasehold_lease');
    }
  });

  it(`compares: the same ${N} lessee PATCHes (set, then clear) sent straight to Ironic`, async () => {
    const setPatch = [
      { op: 'add', path: '/lessee', value: 'direct-lessee' },
      { op: 'add', path: '/extra/leasehold_lease', value: 'direct-lease' },
    ];
    const clearPatch = [
      { op: 'remove', path: '/lessee' },
      { op: 'remove', path: '/extra/leasehold_lease' },
    ];
    const direct: Record<string, unknown> = {};
    for (const concurrency of [ENGINE_BATCH, 8]) {
      const setMs = await withConcurrency(uuids, concurrency, (id) => ironic.request('PATCH', `/v1/nodes/${id}`, setPatch));
      const clearMs = await withConcurrency(uuids, concurrency, (id) => ironic.request('PATCH', `/v1/nodes/${id}`, clearPatch));
      direct[`concurrency_${concurrency}`] = {
        set_seconds: seconds(setMs),
        lessee_sets_per_s: rate(N, setMs),
        clear_seconds: seconds(clearMs),
        lessee_clears_per_s: rate(N, clearMs),
      };
      const after = await ironic.request<{ nodes: WatchedNode[] }>('GET', '/v1/nodes?limit=1000&fields=uuid,lessee');
      expect(after.body.nodes.filter((n) => n.lessee !== null)).toEqual([]);
    }
    figures.add('direct_patches', `${N} PATCHes straight to Ironic (lessee + extra, as Leasehold sends them)`, direct);
  });
});
