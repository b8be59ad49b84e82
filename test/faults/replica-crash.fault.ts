/**
 * Every replica killed with SIGKILL in the middle of work, then started again 3 s later: two real `leasehold serve`
 * processes on one PostgreSQL database in front of one real Ironic. Issue 11 measured releases finishing up to 66 s
 * late after this (claims of a dead worker lasting 60 s) and successor leases that never started; here the
 * restarted replicas must resume within seconds, do each step once, and start the successors.
 * Prints `[figures]` for docs/reliability.md.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ironicAvailable, startIronic, type IronicHandle } from '../support/ironic.js';
import { Figures } from '../support/figures.js';
import { sleep, until, type Api } from '../support/http.js';
import { IronicWatch, nodeSpec, startLeasehold, type LeaseholdOnIronic } from '../support/ironic-leasehold.js';
import { POSTGRES_SKIP_REASON, TEST_DATABASE_URL, testDatabases } from '../support/postgres.js';

const avail = ironicAvailable();
if (!TEST_DATABASE_URL) {
  if (process.env.CI) throw new Error(`the replica crash suite needs PostgreSQL under CI: ${POSTGRES_SKIP_REASON}`);
  console.warn(`replica-crash.fault.ts: ${POSTGRES_SKIP_REASON}`);
}

const COUNT = 13;
const ENDING = Array.from({ length: COUNT }, (_, i) => nodeSpec(`crash-end-${String(i + 1).padStart(2, '0')}`, { memory_gib: 64, cpus: 16, local_gb: 480 }, { owner: 'crash-lab' }));
const STARTING = Array.from({ length: COUNT }, (_, i) => nodeSpec(`crash-start-${String(i + 1).padStart(2, '0')}`, { memory_gib: 64, cpus: 16, local_gb: 480 }, { owner: 'crash-lab' }));
/** From the restart (both replicas listening) to the due work resumed: the claims of the dead workers run out. */
const RESUME_WITHIN_MS = 5_000;

describe.skipIf(!avail.ok || !TEST_DATABASE_URL)('every replica killed with SIGKILL and restarted 3 s later', () => {
  let ironic: IronicHandle;
  const replicas: LeaseholdOnIronic[] = [];
  let watch: IronicWatch;
  let first: Api;
  let second: Api;
  let admin: Api;
  const uuid: Record<string, string> = {};
  const dbs = testDatabases(undefined, 'leasehold_faults');
  let dbUrl = '';
  const withDb = async <T>(fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: dbUrl });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  const figures = new Figures('faults-replica-crash');

  beforeAll(async () => {
    ironic = await startIronic({ auth: 'http_basic' });
    const all = [...ENDING, ...STARTING];
    const ids = await ironic.enroll(all);
    all.forEach((n, i) => (uuid[n.name] = ids[i]!));
    const db = await dbs.create();
    dbUrl = db.url;
    // One replica first (it migrates and bootstraps), then the second on the same database.
    for (let i = 0; i < 2; i++) replicas.push(await startLeasehold(ironic, { env: { DATABASE_URL: db.url, LEASEHOLD_LOG_LEVEL: 'info' } }));
    admin = replicas[0]!.admin;
    const owner = await replicas[0]!.member('crash-lab', 'cora');
    first = await replicas[0]!.member('first-lab', 'fay');
    second = await replicas[1]!.member('second-lab', 'sid');
    for (const n of all) await owner.ok('POST', '/v1/offers', { node_id: n.name, max_lease_duration: '1d' });
    watch = new IronicWatch(ironic, 50).start();
  }, 600_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state === 'fail') replicas.forEach((r, i) => console.log(`---- replica ${i} log (tail) ----\n${r.logTail(60)}`));
  });

  afterAll(async () => {
    figures.report();
    await watch?.stop();
    for (const r of replicas) await r.stop().catch(() => undefined);
    await ironic?.stop();
    await dbs.dropAll();
  });

  /**
   * SIGKILL both, wait 3 s, start both again. Resolves to the instant both listen again, and to when the engine first
   * wrote progress after it (an allocation's `updated_at`, read straight from the database: only the engine changes
   * those rows while nobody calls the API) — the resumption the claims of the dead workers allow.
   */
  async function crashAndRestart(): Promise<{ restartedAt: number; resumedAfterMs: () => Promise<number> }> {
    await Promise.all(replicas.map((r) => r.kill()));
    const killedAt = new Date();
    await sleep(3_000);
    await Promise.all(replicas.map((r) => r.restart()));
    const restartedAt = Date.now();
    const resumedAfterMs = async () => {
      let first: number | null = null;
      await until(async () => {
        const rows = await withDb((c) => c.query<{ at: Date | null }>('select min(updated_at) as at from allocations where updated_at > $1', [killedAt]));
        first = rows.rows[0]?.at ? rows.rows[0].at.getTime() : null;
        return first !== null;
      }, 30_000, 'the engine wrote progress after the restart');
      return first! - restartedAt;
    };
    return { restartedAt, resumedAfterMs };
  }

  const leaseState = (api: Api, id: string) => api.ok('GET', `/v1/leases/${id}`).then((l) => l as { state: string; allocations: { state: string; step: string | null }[] });

  it('killed just after 13 leases ended: the releases finish within seconds of the restart, each step once, and the 13 successor leases start', async () => {
    // 13 one-node leases ending together at `end`, and 13 successors on the same nodes from that instant.
    const end = new Date(Date.now() + 20_000);
    const ending: string[] = [];
    const successors: string[] = [];
    for (const n of ENDING) ending.push((await first.ok('POST', '/v1/leases', { nodes: [n.name], end: end.toISOString() })).id);
    for (const n of ENDING) {
      const body = { nodes: [n.name], start: end.toISOString(), duration: '1h' };
      successors.push((await second.ok('POST', '/v1/leases', body)).id);
    }
    await until(async () => (await Promise.all(ending.map((id) => leaseState(first, id)))).every((l) => l.state === 'active'), 30_000, 'the first leases active');

    await sleep(Math.max(0, end.getTime() + 300 - Date.now()));
    const { restartedAt, resumedAfterMs } = await crashAndRestart();
    const resumed = await resumedAfterMs();
    figures.add('mass_end_resumed', 'first step of the engine after the restart', resumed, 'ms');

    await until(async () => (await Promise.all(ending.map((id) => leaseState(first, id)))).every((l) => l.state === 'ended'), 60_000, 'the first leases ended and cleaned');
    const releasedMs = Date.now() - restartedAt;
    await until(async () => (await Promise.all(successors.map((id) => leaseState(second, id)))).every((l) => l.state === 'active'), 60_000, 'every successor lease active');
    const startedMs = Date.now() - restartedAt;
    figures.add('mass_end_released', `13 releases finished after the restart`, releasedMs, 'ms');
    figures.add('mass_end_successors', `13 successor leases active after the restart`, startedMs, 'ms');

    // Each step once: one release and one hand-over per node, Ironic showing the successors' project.
    for (const id of ending) {
      const types = (await admin.events({ lease_id: id })).map((e) => e.type as string);
      expect(types.filter((t) => t === 'allocation.releasing'), id).toHaveLength(1);
      expect(types.filter((t) => t === 'allocation.released'), id).toHaveLength(1);
    }
    expect(resumed).toBeLessThan(RESUME_WITHIN_MS);
    const secondProject = (await second.ok('GET', '/v1/me')).project.id as string;
    for (const [i, id] of successors.entries()) {
      const types = (await admin.events({ lease_id: id })).map((e) => e.type as string);
      expect(types.filter((t) => t === 'allocation.started'), id).toHaveLength(1);
      expect(types).not.toContain('allocation.start_missed');
      await until(() => watch.latest(uuid[ENDING[i]!.name]!)?.lessee === secondProject, 10_000, `Ironic shows ${ENDING[i]!.name} leased by the successor`);
    }
    // Within seconds, not after a minute of stale claims (issue 11: up to 66 s). The successors wait for the
    // cleaning of their node, which the releases include.
    expect(releasedMs).toBeLessThan(RESUME_WITHIN_MS + 10_000);
    expect(startedMs).toBeLessThan(RESUME_WITHIN_MS + 15_000);
  });

  it('killed just after 13 leases started: every hand-over completes within seconds of the restart, each once', async () => {
    const start = new Date(Date.now() + 15_000);
    const leases: string[] = [];
    for (const n of STARTING) leases.push((await first.ok('POST', '/v1/leases', { nodes: [n.name], start: start.toISOString(), duration: '1h' })).id);
    await sleep(Math.max(0, start.getTime() + 150 - Date.now()));
    const { restartedAt, resumedAfterMs } = await crashAndRestart();
    const resumed = await resumedAfterMs();
    figures.add('mass_start_resumed', 'first step of the engine after the restart', resumed, 'ms');
    await until(async () => (await Promise.all(leases.map((id) => leaseState(first, id)))).every((l) => l.state === 'active'), 60_000, 'every lease active');
    const activeMs = Date.now() - restartedAt;
    figures.add('mass_start_active', '13 hand-overs complete after the restart', activeMs, 'ms');

    const firstProject = (await first.ok('GET', '/v1/me')).project.id as string;
    for (const [i, id] of leases.entries()) {
      const types = (await admin.events({ lease_id: id })).map((e) => e.type as string);
      expect(types.filter((t) => t === 'allocation.started'), id).toHaveLength(1);
      await until(() => watch.latest(uuid[STARTING[i]!.name]!)?.lessee === firstProject, 10_000, `Ironic shows ${STARTING[i]!.name} leased`);
    }
    expect(resumed).toBeLessThan(RESUME_WITHIN_MS);
    expect(activeMs).toBeLessThan(RESUME_WITHIN_MS + 5_000);
  });
});
