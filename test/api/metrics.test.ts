import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseEngine } from '../../src/engine/lease-engine.js';
import { Reconciler } from '../../src/engine/reconciler.js';
import { createLogger } from '../../src/logger.js';
import { sampleValue, parsePrometheusText, type Family } from '../support/prometheus-text.js';
import { ADMIN_TOKEN, FAKE_BMC_PASSWORD, NODE_IDS, createProjectUser, startApp, type TestApp } from '../support/test-app.js';

const silent = createLogger('silent');
const MINUTE = 60_000;

let t: TestApp;
let engine: LeaseEngine;
let owner: { projectId: string; token: string };
let lessee: { projectId: string; token: string };

/** Scrapes /metrics as Prometheus would (no token) and parses it strictly. */
async function scrape(app: TestApp = t, token: string | null = null): Promise<Map<string, Family>> {
  const res = await app.request('GET', '/metrics', { token });
  expect(res.status, String(res.body)).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(res.body as string);
}

/** Runs the engine on the manual clock, `stepMs` at a time, until `done` says so (bounded). */
async function runEngineUntil(done: () => Promise<boolean>, stepMs = 100): Promise<void> {
  for (let i = 0; i < 200 && !(await done()); i++) {
    await t.clock.advance(stepMs);
    await engine.runDue();
  }
  expect(await done()).toBe(true);
}

beforeAll(async () => {
  t = await startApp();
  // The engine reports to the app's registry, as start-server wires it; watchMs 0: the manual clock never waits.
  engine = new LeaseEngine({ store: t.store, driver: t.driver, clock: t.clock, logger: silent, inventory: t.inventory, metrics: t.deps.metrics, watchMs: 0, settleMs: 50 });
  owner = await createProjectUser(t, 'physics-lab', 'member');
  lessee = await createProjectUser(t, 'astro', 'member');
  const offer = await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'gpu-01' } });
  expect(offer.status, JSON.stringify(offer.body)).toBe(201);
});
afterAll(async () => {
  await engine?.stop();
  await t?.close();
});

describe('GET /metrics', () => {
  it('counts requests by the matched route template, with the status, never by the raw path', async () => {
    await t.request('GET', `/v1/nodes/${NODE_IDS.gpuSmall}`);
    await t.request('GET', '/v1/nodes/gpu-02');
    await t.request('GET', `/v1/nodes/${NODE_IDS.storage}`, { token: null });
    await t.request('GET', '/v1/no-such-thing/42');
    await t.request('GET', '/baremetal/v1/nodes/gpu-01');
    const m = await scrape();
    expect(m.get('leasehold_http_requests_total')?.type).toBe('counter');
    expect(sampleValue(m, 'leasehold_http_requests_total', { method: 'GET', route: '/v1/nodes/:id', status: '200' })).toBe(2);
    // Refused by the auth middleware before the handler: still counted under the route asked for.
    expect(sampleValue(m, 'leasehold_http_requests_total', { method: 'GET', route: '/v1/nodes/:id', status: '401' })).toBe(1);
    expect(sampleValue(m, 'leasehold_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    expect(sampleValue(m, 'leasehold_http_request_duration_seconds_count', { method: 'GET', route: '/v1/nodes/:id' })).toBe(3);
    // The gateway's routes, under their mount point.
    expect(sampleValue(m, 'leasehold_http_request_duration_seconds_count', { method: 'GET', route: '/baremetal/v1/nodes/:ident' })).toBe(1);
    const routes = new Set(m.get('leasehold_http_requests_total')!.samples.map((s) => s.labels.route));
    expect([...routes].filter((r) => /gpu-0|[0-9a-f]{8}-|no-such-thing/.test(r!))).toEqual([]);
  });

  it('shows a new lease and its allocation as pending and reserved, every known state present with zeros', async () => {
    const before = await scrape();
    expect(sampleValue(before, 'leasehold_leases', { state: 'pending' })).toBe(0);
    expect(sampleValue(before, 'leasehold_store_up')).toBe(1);
    const lease = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['gpu-01'], start: new Date(t.clock.now().getTime() + MINUTE).toISOString(), duration: '1h' } });
    expect(lease.status, JSON.stringify(lease.body)).toBe(201);
    const m = await scrape();
    expect(sampleValue(m, 'leasehold_leases', { state: 'pending' })).toBe(1);
    expect(sampleValue(m, 'leasehold_leases', { state: 'failed' })).toBe(0);
    expect(sampleValue(m, 'leasehold_allocations', { state: 'reserved' })).toBe(1);
    expect(sampleValue(m, 'leasehold_allocations', { state: 'quarantined' })).toBe(0);
    expect(sampleValue(m, 'leasehold_http_requests_total', { method: 'POST', route: '/v1/leases', status: '201' })).toBe(1);
    // The test inventory's five nodes, all available and none quarantined.
    expect(sampleValue(m, 'leasehold_nodes', { provision_state: 'available', quarantined: 'false' })).toBe(5);
  });

  it('reports the start task run with its lag from the due time, then the lease as active', async () => {
    // The lease starts a minute from creation; the engine first looks 30 s after that.
    await t.clock.advance(MINUTE + 30_000);
    await engine.runDue();
    const m = await scrape();
    expect(sampleValue(m, 'leasehold_engine_task_runs_total', { kind: 'start', outcome: 'done' })).toBe(1);
    expect(sampleValue(m, 'leasehold_engine_task_lag_seconds_count', { kind: 'start' })).toBe(1);
    expect(sampleValue(m, 'leasehold_engine_task_lag_seconds_sum', { kind: 'start' })).toBe(30);
    expect(sampleValue(m, 'leasehold_engine_task_lag_seconds_bucket', { kind: 'start', le: '10' })).toBe(0);
    expect(sampleValue(m, 'leasehold_engine_task_lag_seconds_bucket', { kind: 'start', le: '30' })).toBe(1);
    expect(sampleValue(m, 'leasehold_leases', { state: 'active' })).toBe(1);
    expect(sampleValue(m, 'leasehold_allocations', { state: 'active' })).toBe(1);
  });

  it("times the cleaning from the allocation's end to the node available, and counts the end task's runs", async () => {
    await t.clock.advance(60 * MINUTE);
    const ended = async () => sampleValue(await scrape(), 'leasehold_leases', { state: 'ended' }) === 1;
    await runEngineUntil(ended);
    const m = await scrape();
    const seconds = sampleValue(m, 'leasehold_cleaning_duration_seconds_sum')!;
    expect(sampleValue(m, 'leasehold_cleaning_duration_seconds_count')).toBe(1);
    // The end came 30 s before the clock's advance stopped; the rest is the simulated release in 100 ms steps.
    expect(seconds).toBeGreaterThanOrEqual(30);
    expect(seconds).toBeLessThan(60);
    expect(sampleValue(m, 'leasehold_engine_task_runs_total', { kind: 'end', outcome: 'done' })).toBe(1);
    expect(sampleValue(m, 'leasehold_engine_task_runs_total', { kind: 'end', outcome: 'later' })).toBeGreaterThan(0);
    expect(sampleValue(m, 'leasehold_allocations', { state: 'released' })).toBe(1);
  });

  it('counts a repaired drift by kind and times the pass', async () => {
    const reconciler = new Reconciler({ store: t.store, driver: t.driver, clock: t.clock, logger: silent, inventory: t.inventory, intervalMs: 30_000, metrics: t.deps.metrics });
    await t.driver.updateNode(NODE_IDS.storage, { lessee: 'someone-by-hand' });
    expect((await reconciler.reconcile()).applied).toBe(1);
    const m = await scrape();
    expect(sampleValue(m, 'leasehold_reconcile_repairs_total', { kind: 'clear_lessee' })).toBe(1);
    expect(sampleValue(m, 'leasehold_reconcile_repairs_total', { kind: 'vif_removed' })).toBe(0);
    expect(sampleValue(m, 'leasehold_reconcile_pass_duration_seconds_count', { outcome: 'ok' })).toBe(1);
    await reconciler.stop();
  });

  it('reports the database pool and the open console connections', async () => {
    const m = await scrape();
    // PGlite: one session, free between queries.
    expect(sampleValue(m, 'leasehold_db_pool_max')).toBe(1);
    expect(sampleValue(m, 'leasehold_db_pool_connections', { state: 'in_use' })).toBe(0);
    expect(sampleValue(m, 'leasehold_db_pool_waiting')).toBe(0);
    expect(sampleValue(m, 'leasehold_console_connections')).toBe(0);
  });

  it('carries no id, node name, project, token or secret in any label, and follows the naming conventions', async () => {
    const text = (await t.request('GET', '/metrics', { token: null })).body as string;
    const m = parsePrometheusText(text);
    const leases = await t.request('GET', '/v1/leases');
    const secrets = [
      ADMIN_TOKEN, owner.token, lessee.token, FAKE_BMC_PASSWORD, owner.projectId, lessee.projectId, 'physics-lab', 'astro',
      ...Object.values(NODE_IDS), 'gpu-01', 'gpu-02', 'store-01', 'someone-by-hand',
      ...leases.body.leases.map((l: { id: string }) => l.id),
    ];
    for (const secret of secrets) expect(text).not.toContain(secret);
    for (const family of m.values()) {
      expect(family.name).toMatch(/^leasehold_[a-z_]+$/);
      if (family.type === 'counter') expect(family.name).toMatch(/_total$/);
      if (family.type === 'histogram') expect(family.name).toMatch(/_seconds$/);
      expect(family.help.length).toBeGreaterThan(10);
    }
  });
});

describe('who may scrape', () => {
  it('with LEASEHOLD_METRICS_TOKEN set, only `Authorization: Bearer <it>` gets the metrics; a user token does not', async () => {
    const guarded = await startApp({ metricsAccess: { token: 'scrape-token-0123456789', separatePort: null } });
    try {
      const none = await guarded.request('GET', '/metrics', { token: null });
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer realm="leasehold-metrics"');
      expect(none.body.error.code).toBe('unauthenticated');
      expect((await guarded.request('GET', '/metrics', { token: ADMIN_TOKEN })).status).toBe(401);
      expect((await guarded.request('GET', '/metrics', { token: 'scrape-token-0123456789x' })).status).toBe(401);
      const m = await scrape(guarded, 'scrape-token-0123456789');
      expect(sampleValue(m, 'leasehold_http_requests_total', { route: '/metrics', status: '401' })).toBe(3);
    } finally {
      await guarded.close();
    }
  });

  it('with a separate metrics port, the API port answers 404 naming that port', async () => {
    const apart = await startApp({ metricsAccess: { token: null, separatePort: 9464 } });
    try {
      const res = await apart.request('GET', '/metrics', { token: null });
      expect(res.status).toBe(404);
      expect(res.body.error.message).toBe('metrics are served on port 9464 (LEASEHOLD_METRICS_PORT)');
    } finally {
      await apart.close();
    }
  });
});
