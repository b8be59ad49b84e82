/**
 * Leasehold and a real Ironic drifting apart, and coming back together: a lessee set or changed by hand in Ironic
 * (the reconciler repairs it within LEASEHOLD_RECONCILE_INTERVAL and logs it), and Leasehold killed with SIGKILL
 * during a lease and started again after its end (Ironic's lessee is cleared right after the restart, the node
 * cleaned). Prints `[figures]` for how long each repair took.
 */
import { describe, expect, it } from 'vitest';
import { ironicAvailable } from '../support/ironic.js';
import { Figures } from '../support/figures.js';
import { sleep, until } from '../support/http.js';
import { availableAgain, nodeSpec, useIronicSuite } from '../support/ironic-leasehold.js';
import { PROMPTLY_MS } from '../support/timing.js';

const avail = ironicAvailable();

/** LEASEHOLD_RECONCILE_INTERVAL for this suite. */
const RECONCILE_MS = 2_000;
/** A repair is seen in Ironic within the interval plus this (one reconcile pass, one PATCH, our polling, a busy machine). */
const REPAIR_SLACK_MS = PROMPTLY_MS;

const NODES = [
  nodeSpec('drift-free', { memory_gib: 128, cpus: 32, local_gb: 960 }, { owner: 'infra-lab' }),
  nodeSpec('drift-held', { memory_gib: 128, cpus: 32, local_gb: 960 }, { owner: 'infra-lab' }),
  nodeSpec('crash-1', { memory_gib: 256, cpus: 64, local_gb: 1920, gpus: 4, gpu_model: 'nvidia-a100' }, { owner: 'infra-lab' }),
];

describe.skipIf(!avail.ok)('drift between Leasehold and a real Ironic', () => {
  const figures = new Figures('reconcile_and_crash');
  const s = useIronicSuite(NODES, { env: { LEASEHOLD_RECONCILE_INTERVAL: `${RECONCILE_MS / 1000}s` }, owner: ['infra-lab', 'ian'], tenant: ['hpc-lab', 'hana'], figures });

  const setLesseeByHand = (id: string, lessee: string) =>
    s.ironic.request('PATCH', `/v1/nodes/${id}`, [{ op: 'add', path: '/lessee', value: lessee }]);

  it('clears a lessee someone set by hand in Ironic on a node nobody leases, within the reconcile interval, and logs it', async () => {
    const id = s.uuid['drift-free']!;
    await setLesseeByHand(id, 'someone-else');
    const setAt = Date.now();
    const cleared = await s.watch.waitFor(id, (n) => n.lessee === null, {
      since: setAt,
      timeoutMs: RECONCILE_MS + REPAIR_SLACK_MS + 5_000,
      what: 'with the hand-set lessee cleared',
    });
    figures.add('hand_set_lessee_cleared_ms', `hand-set lessee → cleared by the reconciler (interval ${RECONCILE_MS} ms)`, cleared - setAt, 'ms');
    expect(cleared - setAt).toBeLessThan(RECONCILE_MS + REPAIR_SLACK_MS);

    await until(async () => (await s.lh.admin.events({ type: 'reconcile.lessee_cleared', node_id: id })).length > 0, 5_000, 'the event');
    const events = await s.lh.admin.events({ type: 'reconcile.lessee_cleared', node_id: id });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ node_id: id, details: { found_lessee: 'someone-else' } });
    // The owner reads it in its node's history; the node stays free and leasable.
    expect((await s.owner.events({ type: 'reconcile.lessee_cleared' })).map((e) => e.node_id)).toContain(id);
    expect((await s.owner.ok('GET', `/v1/nodes/${id}`)).lessee).toBeNull();
    expect((await s.tenant.call('POST', '/v1/leases/quote', { nodes: ['drift-free'], duration: '1h' })).status).toBe(200);
    await sleep(RECONCILE_MS + 500);
    expect(await s.lh.admin.events({ type: 'reconcile.lessee_cleared', node_id: id })).toHaveLength(1); // repaired once
  });

  it('restores the lessee of an active lease that someone changed by hand in Ironic, and logs it', async () => {
    const id = s.uuid['drift-held']!;
    const lease = await s.tenant.ok('POST', '/v1/leases', { name: 'held', nodes: ['drift-held'], duration: '2m' });
    await s.watch.waitFor(id, (n) => n.lessee === lease.project_id, { timeoutMs: 10_000, what: 'with the lessee' });

    await setLesseeByHand(id, 'intruder');
    const changedAt = Date.now();
    const restored = await s.watch.waitFor(id, (n) => n.lessee === lease.project_id, {
      since: changedAt + 1,
      timeoutMs: RECONCILE_MS + REPAIR_SLACK_MS + 5_000,
      what: 'with the lessee restored',
    });
    figures.add('changed_lessee_restored_ms', `hand-changed lessee of an active lease → restored (interval ${RECONCILE_MS} ms)`, restored - changedAt, 'ms');
    expect(restored - changedAt).toBeLessThan(RECONCILE_MS + REPAIR_SLACK_MS);
    expect((await s.ironic.getNode(id)).extra).toMatchObject({ leasehold_lease: lease.id });

    await until(async () => (await s.lh.admin.events({ type: 'reconcile.lessee_restored', node_id: id })).length > 0, 5_000, 'the event');
    const [event] = await s.lh.admin.events({ type: 'reconcile.lessee_restored', node_id: id });
    expect(event).toMatchObject({ node_id: id, details: { found_lessee: 'intruder' } });
    // The lessee kept its access throughout, and sees the repair in its lease's log.
    expect((await s.tenant.call('GET', `/v1/nodes/${id}`)).status).toBe(200);
    expect((await s.tenant.ok('GET', `/v1/leases/${lease.id}`)).state).toBe('active');

    // Ending it clears the lessee as usual.
    const ended = await s.tenant.ok('DELETE', `/v1/leases/${lease.id}`);
    await s.watch.waitFor(id, (n) => n.lessee === null, { since: Date.parse(ended.end), timeoutMs: 5_000, what: 'with the lessee cleared' });
    await until(async () => (await s.tenant.ok('GET', `/v1/leases/${lease.id}`)).state === 'ended', 20_000, 'the lease ended');
  });

  it('a Leasehold killed with SIGKILL during a lease and restarted after its end clears the lessee at once and cleans the node', async () => {
    const id = s.uuid['crash-1']!;
    const lease = await s.tenant.ok('POST', '/v1/leases', { name: 'crash', nodes: ['crash-1'], duration: '3s' });
    const end = Date.parse(lease.end);
    await s.watch.waitFor(id, (n) => n.lessee === lease.project_id, { timeoutMs: 10_000, what: 'with the lessee' });
    const before = s.watch.latest(id);

    await s.lh.kill();
    expect(Date.now()).toBeLessThan(end); // killed during the lease
    await sleep(end + 2_000 - Date.now());
    // Nobody took the node back meanwhile: Ironic still names the lessee after the end.
    expect((await s.ironic.getNode(id)).lessee).toBe(lease.project_id);

    const restartMs = await s.lh.restart();
    const listening = Date.now();
    const cleared = await s.watch.waitFor(id, (n) => n.lessee === null, { since: listening - restartMs, timeoutMs: 15_000, what: 'with the lessee cleared' });
    const available = await s.watch.waitFor(id, availableAgain(before), { since: listening - restartMs, timeoutMs: 30_000, what: 'cleaned and available' });
    figures.add('restart_listening_ms', 'restart → listening (embedded store, after SIGKILL)', restartMs, 'ms');
    figures.add('restart_lessee_cleared_ms', 'restarted and listening → lessee cleared in Ironic', cleared - listening, 'ms');
    figures.add('restart_available_s', 'restarted and listening → node cleaned and available', Math.round((available - listening) / 100) / 10, 's');
    expect(cleared - listening).toBeLessThan(RECONCILE_MS + PROMPTLY_MS);

    await until(async () => (await s.tenant.ok('GET', `/v1/leases/${lease.id}`)).state === 'ended', 20_000, 'the lease ended');
    const after = await s.tenant.ok('GET', `/v1/leases/${lease.id}`);
    expect(after.allocations).toMatchObject([{ node_id: id, state: 'released' }]);
    expect(await s.ironic.getNode(id)).toMatchObject({ lessee: null, provision_state: 'available', power_state: 'power off' });
    expect((await s.tenant.call('GET', `/v1/nodes/${id}`)).status).toBe(404);
    // Released exactly once.
    expect(await s.tenant.events({ lease_id: lease.id, type: 'allocation.released' })).toHaveLength(1);
  });
});
