/**
 * The database going away under two real `leasehold serve` replicas (simulated hardware; the fault is the
 * database): backends terminated again and again under load, PostgreSQL restarted, and an outage of several
 * seconds. On a PostgreSQL server of the suite's own (test/support/private-postgres.ts), so the shared server that
 * the other suites use is never touched. Prints `[figures]` (requests, statuses, recovery times) for
 * docs/reliability.md.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Figures } from '../support/figures.js';
import { Api, sleep, until } from '../support/http.js';
import { privatePostgresAvailable, startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.js';
import { startLeaseholdServer, type LeaseholdServer } from '../support/server.js';

const avail = privatePostgresAvailable();
const NODES = Array.from({ length: 6 }, (_, i) => ({
  uuid: `fa017000-0000-4000-8000-00000000000${i + 1}`,
  name: `db-fault-${i + 1}`,
  owner: 'owners',
  properties: { memory_mb: 65536, cpus: 16, local_gb: 480, cpu_arch: 'x86_64' },
}));
const TIMINGS = { powerMs: 20, cleanMs: 200, deployMs: 50, undeployMs: 20, manageMs: 20, consoleMs: 10, bootOutputMs: 0 };

describe.skipIf(!avail.ok)('the database going away under two replicas', () => {
  let pg: PrivatePostgres;
  let database = '';
  const replicas: LeaseholdServer[] = [];
  const admin = (i: number) => replicas[i]!.admin;
  let lessee: Api[] = [];
  const figures = new Figures('faults-postgres');

  beforeAll(async () => {
    pg = await startPrivatePostgres();
    database = 'faults';
    const env = {
      DATABASE_URL: await pg.createDatabase(database),
      LEASEHOLD_SIMULATED_NODES: JSON.stringify(NODES),
      LEASEHOLD_SIMULATED_TIMINGS: JSON.stringify(TIMINGS),
    };
    for (let i = 0; i < 2; i++) replicas.push(await startLeaseholdServer(env));
    const owner = await replicas[0]!.member('owners', 'olga');
    for (const node of NODES) await owner.ok('POST', '/v1/offers', { node_id: node.name });
    const tess = await replicas[1]!.member('tenants', 'tess');
    lessee = [0, 1].map((i) => replicas[i]!.api(tess.token, `tess@${i}`));
  }, 120_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') {
      for (const [i, r] of replicas.entries()) console.log(`---- replica ${i} (exit: ${r.exit}) ----\n${r.logTail(40)}`);
    }
  });

  afterAll(async () => {
    figures.report();
    for (const r of replicas) {
      await r.kill();
      await r.stop();
    }
    await pg?.destroy();
  });

  /** Both replicas still running (an exit is the defect this suite exists for). */
  const expectAlive = () => expect(replicas.map((r) => r.exit)).toEqual([null, null]);

  it('backends terminated again and again under load: no replica exits, requests fail only with 503 backend_unavailable meanwhile, and both serve again without a restart', async () => {
    const load = new Load([...lessee, admin(0), admin(1)]);
    load.start(12);
    await sleep(1_000);
    let terminated = 0;
    for (let round = 0; round < 20; round++) {
      terminated += await pg.terminateBackends(database);
      await sleep(250);
    }
    const during = load.snapshot();
    // Once it stops, every request succeeds again on both replicas, without a restart.
    await sleep(1_000);
    load.reset();
    await sleep(3_000);
    const after = load.snapshot();
    await load.stop();

    expectAlive();
    expect(terminated).toBeGreaterThan(20);
    expect(during.unexpected, JSON.stringify(during.unexpected.slice(0, 5))).toEqual([]);
    expect(during.byStatus[503] ?? 0).toBeGreaterThan(0);
    expect(after.unexpected).toEqual([]);
    expect(after.byStatus[503] ?? 0).toBe(0);
    expect(after.ok).toBeGreaterThan(50);
    for (const i of [0, 1]) expect((await admin(i).call('GET', '/readyz')).status).toBe(200);
    figures.add('terminate_backends', 'backends terminated every 250 ms for 5 s under load', { sessions_terminated: terminated, requests: during.total, by_status: during.byStatus, after_ok: after.ok });

    // The engines work on: a lease made now starts and ends on either replica.
    const lease = await lessee[0]!.ok('POST', '/v1/leases', { nodes: ['db-fault-1'], duration: '2s' });
    await until(async () => (await lessee[1]!.ok('GET', `/v1/leases/${lease.id}`)).state === 'ended', 30_000, 'the lease started and ended');
  });

  it('PostgreSQL restarted under load: no replica exits, /readyz recovers by itself within seconds', async () => {
    const load = new Load([...lessee, admin(0), admin(1)]);
    load.start(8);
    await sleep(500);
    const downMs = await pg.restart();
    const t0 = Date.now();
    await until(async () => (await Promise.all([0, 1].map((i) => admin(i).call('GET', '/readyz')))).every((r) => r.status === 200), 20_000, 'both replicas ready again');
    const readyAfterMs = Date.now() - t0;
    const snapshot = load.snapshot();
    await load.stop();
    expectAlive();
    expect(snapshot.unexpected, JSON.stringify(snapshot.unexpected.slice(0, 5))).toEqual([]);
    figures.add('restart', 'pg_ctl restart -m fast under load', { down_ms: downMs, ready_after_restart_ms: readyAfterMs, requests: snapshot.total, by_status: snapshot.byStatus });
  });

  it('an outage of several seconds: /readyz says 503 while the database is down, requests get 503, and a lease whose start fell in the outage starts late and runs to its end', async () => {
    const startAt = new Date(Date.now() + 2_500);
    const lease = await lessee[0]!.ok('POST', '/v1/leases', { nodes: ['db-fault-2'], start: startAt.toISOString(), duration: '20s' });
    await pg.stop('fast');
    const downAt = Date.now();
    for (const i of [0, 1]) {
      await until(async () => (await admin(i).call('GET', '/readyz')).status === 503, 5_000, `replica ${i} not ready while the database is down`);
      const me = await lessee[i]!.call('GET', '/v1/me');
      expect(me.status).toBe(503);
      expect(me.body.error).toMatchObject({ code: 'backend_unavailable' });
    }
    // Down past the lease's start.
    await sleep(Math.max(0, startAt.getTime() + 2_000 - Date.now()));
    await pg.start();
    const upAt = Date.now();
    await until(async () => (await Promise.all([0, 1].map((i) => admin(i).call('GET', '/readyz')))).every((r) => r.status === 200), 20_000, 'both replicas ready again');
    const readyMs = Date.now() - upAt;
    await until(async () => (await lessee[1]!.ok('GET', `/v1/leases/${lease.id}`)).state === 'active', 20_000, 'the lease started after the outage');
    const activeMs = Date.now() - upAt;
    expectAlive();
    figures.add('outage', 'outage across a lease start', { down_ms: upAt - downAt, ready_after_up_ms: readyMs, lease_active_after_up_ms: activeMs });

    // It runs to its end and its node is cleaned, each step once.
    await until(async () => (await lessee[0]!.ok('GET', `/v1/leases/${lease.id}`)).state === 'ended', 60_000, 'the lease ended');
    const types = (await admin(0).events({ lease_id: lease.id })).map((e) => e.type as string);
    expect(types.filter((t) => t === 'allocation.started')).toHaveLength(1);
    expect(types.filter((t) => t === 'allocation.released')).toHaveLength(1);
    expect(types).not.toContain('allocation.start_missed');
  }, 120_000);
});

/**
 * Concurrent callers looping over a few reads and a quote, counting statuses; anything but 2xx/409/503 is kept.
 * The first two callers are the lessee (on each replica): they ask the quotes.
 */
class Load {
  private running = false;
  private loops: Promise<void>[] = [];
  private byStatus: Record<number, number> = {};
  private unexpected: string[] = [];

  constructor(private readonly callers: readonly Api[]) {}

  start(concurrency: number): void {
    this.running = true;
    const paths = ['/v1/me', '/v1/leases?limit=20', '/v1/nodes', '/v1/offers'];
    this.loops = Array.from({ length: concurrency }, async (_, i) => {
      for (let n = 0; this.running; n++) {
        const caller = this.callers[(i + n) % this.callers.length]!;
        // Quotes as the lessee (an operator belongs to no project and cannot lease).
        const quote = n % 5 === 4 && i % 2 === 0;
        const asker = quote ? this.callers[n % 2]! : caller;
        try {
          const res = quote
            ? await asker.call('POST', '/v1/leases/quote', { nodes: ['db-fault-6'], duration: '1h' })
            : await caller.call('GET', paths[n % paths.length]!);
          this.byStatus[res.status] = (this.byStatus[res.status] ?? 0) + 1;
          const ok = res.status < 300 || res.status === 409;
          const unavailable = res.status === 503 && res.body?.error?.code === 'backend_unavailable';
          if (!ok && !unavailable) this.unexpected.push(`${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
        } catch (err) {
          // The connection itself failed: the process is gone (or never answered).
          this.unexpected.push(`no answer: ${(err as Error).message}`);
          await sleep(100);
        }
      }
    });
  }

  snapshot() {
    const total = Object.values(this.byStatus).reduce((a, b) => a + b, 0);
    const ok = Object.entries(this.byStatus).filter(([s]) => Number(s) < 300).reduce((a, [, n]) => a + n, 0);
    return { total, ok, byStatus: { ...this.byStatus }, unexpected: [...this.unexpected] };
  }

  reset(): void {
    this.byStatus = {};
    this.unexpected = [];
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }
}
