/**
 * Things going wrong with a real Ironic behind the real `leasehold serve` process: a lessee's own tooling leaving
 * a node in `clean failed` (Leasehold quarantines it at the end, with Ironic's last_error), and Ironic itself
 * going away for a while in the middle of a lease (Leasehold still ends access at the end and catches up once
 * Ironic is back). Prints `[figures]` for the catch-up.
 */
import { describe, expect, it } from 'vitest';
import { ironicAvailable } from '../support/ironic.js';
import { Figures } from '../support/figures.js';
import { sleep, until } from '../support/http.js';
import { availableAgain, nodeSpec, useIronicSuite } from '../support/ironic-leasehold.js';

const avail = ironicAvailable();

const NODES = [
  nodeSpec('flaky-1', { memory_gib: 192, cpus: 64, local_gb: 1920 }, { owner: 'ops-lab', traits: ['CUSTOM_NVME'] }),
  nodeSpec('steady-1', { memory_gib: 192, cpus: 64, local_gb: 1920 }, { owner: 'ops-lab', traits: ['CUSTOM_NVME'] }),
  nodeSpec('outage-1', { memory_gib: 256, cpus: 64, local_gb: 960, gpus: 2, gpu_model: 'nvidia-a100' }, { owner: 'ops-lab' }),
];

describe.skipIf(!avail.ok)('failures around a real Ironic', () => {
  const figures = new Figures('failures');
  const s = useIronicSuite(NODES, { ironic: { auth: 'http_basic' }, owner: ['ops-lab', 'olga'], tenant: ['tenant-lab', 'tara'], figures });

  it("quarantines a node whose cleaning failed at the lease's end, with Ironic's last_error, and refuses to lease it again", async () => {
    const id = s.uuid['flaky-1']!;
    // `replace: never`: the lessee keeps its node however its own tooling leaves it (under `auto`, the default, a
    // node in `clean failed` is replaced by its twin at once: test/ironic/lifecycle.ironic.ts).
    const lease = await s.tenant.ok('POST', '/v1/leases', { name: 'flaky', nodes: ['flaky-1'], duration: '4s', replace: 'never' });
    await s.watch.waitFor(id, (n) => n.lessee === lease.project_id, { timeoutMs: 10_000, what: 'with the lessee' });

    // The lessee's own tooling, talking to Ironic directly, starts a manual cleaning with a step that does not
    // exist: Ironic leaves the node in `clean failed` with a last_error.
    await s.ironic.setProvisionState(id, 'manage');
    await s.ironic.waitForNode(id, (n) => n.provision_state === 'manageable' && !n.target_provision_state, { what: 'manageable' });
    await s.ironic.setProvisionState(id, 'clean', { clean_steps: [{ interface: 'deploy', step: 'no_such_step' }] });
    // (Ironic keeps target_provision_state `manageable` on a failed manual cleaning.)
    const failed = await s.ironic.waitForNode(id, (n) => n.provision_state === 'clean failed' && n.reservation === null, {
      what: 'clean failed',
      fail: () => false,
    });
    expect(failed.last_error).toBeTruthy();
    expect(Date.now()).toBeLessThan(Date.parse(lease.end)); // all of that happened during the lease

    // At the end Leasehold takes the node back, finds it failed and quarantines it.
    await until(
      async () => (await s.lh.admin.events({ type: 'node.quarantined', node_id: id })).length > 0,
      20_000,
      'a node.quarantined event',
    );
    const [event] = await s.lh.admin.events({ type: 'node.quarantined', node_id: id });
    expect(event).toMatchObject({ node_id: id, lease_id: lease.id, outcome: 'error' });
    const lastError = (await s.ironic.getNode(id)).last_error;
    expect(event.details.last_error).toBe(lastError);
    expect(event.message).toContain(lastError);

    // The owner sees it, with the reason; the lease is over; Ironic no longer names the lessee.
    const seen = await s.owner.ok('GET', `/v1/nodes/${id}`);
    expect(seen).toMatchObject({ quarantined: true, lessee: null, provision_state: 'clean failed' });
    expect(seen.quarantine_reason).toContain(lastError);
    await until(async () => (await s.tenant.ok('GET', `/v1/leases/${lease.id}`)).state === 'ended', 10_000, 'the lease ended');
    const after = await s.tenant.ok('GET', `/v1/leases/${lease.id}`);
    expect(after.allocations).toMatchObject([{ node_id: id, state: 'quarantined' }]);
    expect((await s.ironic.getNode(id)).lessee).toBeNull();
    expect((await s.tenant.events({ lease_id: lease.id, type: 'lease.node_quarantined' })).map((e) => e.node_id)).toEqual([id]);

    // Nobody can lease it while it is quarantined, though its offer is still in force.
    const again = await s.tenant.call('POST', '/v1/leases', { nodes: ['flaky-1'], duration: '1h' });
    expect(again.status).toBe(409);
    expect(JSON.stringify(again.body)).toContain('quarantined');
    const byOwner = await s.owner.call('POST', '/v1/leases', { nodes: ['flaky-1'], duration: '1h' });
    expect(byOwner.status).toBe(409);
    // Its healthy twin can be had meanwhile.
    const twin = await s.tenant.call('POST', '/v1/leases/quote', { nodes: ['steady-1'], duration: '1h' });
    expect(twin.status).toBe(200);
  });

  it('while Ironic is down, reports not ready, ends access exactly at the end, and catches up once Ironic is back', async () => {
    const id = s.uuid['outage-1']!;
    const lease = await s.tenant.ok('POST', '/v1/leases', { name: 'outage', nodes: ['outage-1'], duration: '7s' });
    const end = Date.parse(lease.end);
    await s.watch.waitFor(id, (n) => n.lessee === lease.project_id, { timeoutMs: 10_000, what: 'with the lessee' });
    expect((await s.lh.admin.call('GET', '/readyz')).status).toBe(200);
    const before = s.watch.latest(id);

    await s.ironic.halt();
    const haltedAt = Date.now();
    expect(haltedAt).toBeLessThan(end - 1_000); // Ironic went away during the lease

    // Leasehold says it is not ready, and why.
    const ready = await s.lh.admin.call('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.error.message).toMatch(/driver \(ironic\): .*(unreachable|no answer)/);
    expect(ready.body.error.details.checks).toMatchObject({ store: 'ok' });
    expect(ready.body.error.details.checks['driver (ironic)']).not.toBe('ok');

    // The lessee still has the node until the end...
    if (Date.now() < end - 500) expect((await s.tenant.call('GET', `/v1/nodes/${id}`)).status).toBe(200);
    // ...and loses it exactly at the end, Ironic or not: 404 as for any node one may not see, never a 503.
    await sleep(Math.max(0, end - Date.now() + 50));
    const show = await s.tenant.call('GET', `/v1/nodes/${id}`);
    expect(show.status).toBe(404);
    const power = await s.tenant.call('POST', `/v1/nodes/${id}/power`, { action: 'on' });
    expect(power.status).toBe(404);
    expect(power.body.error.code).toBe('not_found');

    // The lease reads sensibly: over, its node being released (waiting for Ironic), not active and not ended.
    await until(async () => (await s.tenant.ok('GET', `/v1/leases/${lease.id}`)).state === 'ending', 5_000, 'the lease reads ending');
    await sleep(Math.max(0, end + 4_000 - Date.now())); // Ironic stays away a few seconds past the end
    const during = await s.tenant.ok('GET', `/v1/leases/${lease.id}`);
    expect(during.state).toBe('ending');
    expect(during.allocations).toMatchObject([{ node_id: id, state: 'releasing', step: 'clear_lessee' }]);
    expect(during.allocations[0].last_error).toMatch(/ironic/i);
    expect(s.watch.latest(id)!.lessee).toBe(lease.project_id); // nothing reached Ironic (it is down)

    // Ironic comes back (the same database): the engine catches up within ~15 s.
    await s.ironic.restart();
    const backAt = Date.now();
    figures.add('ironic_down_s', 'Ironic down (halt → back, the lease ended in between)', Math.round((backAt - haltedAt) / 100) / 10, 's');
    const cleared = await s.watch.waitFor(id, (n) => n.lessee === null, { since: backAt, timeoutMs: 20_000, what: 'with the lessee cleared' });
    const available = await s.watch.waitFor(id, availableAgain(before), { since: backAt, timeoutMs: 25_000, what: 'cleaned and available' });
    let endedAt = 0;
    await until(
      async () => {
        const l = await s.tenant.ok('GET', `/v1/leases/${lease.id}`);
        if (l.state === 'ended') endedAt = Date.now();
        return l.state === 'ended';
      },
      25_000,
      'the lease ended',
    );
    figures.add('catch_up_lessee_cleared_s', 'Ironic back → lessee cleared', Math.round((cleared - backAt) / 100) / 10, 's');
    figures.add('catch_up_available_s', 'Ironic back → node cleaned and available', Math.round((available - backAt) / 100) / 10, 's');
    figures.add('catch_up_lease_ended_s', 'Ironic back → lease ended', Math.round((endedAt - backAt) / 100) / 10, 's');
    expect(cleared - backAt).toBeLessThan(15_000);
    expect(available - backAt).toBeLessThan(15_000);
    expect(endedAt - backAt).toBeLessThan(16_000);

    const ended = await s.tenant.ok('GET', `/v1/leases/${lease.id}`);
    expect(ended.allocations).toMatchObject([{ node_id: id, state: 'released', last_error: null }]);
    expect(await s.ironic.getNode(id)).toMatchObject({ lessee: null, provision_state: 'available', power_state: 'power off' });
    await until(async () => (await s.lh.admin.call('GET', '/readyz')).status === 200, 10_000, 'ready again');
    // The engine's trouble is in the audit log for the lessee to read.
    const errors = await s.tenant.events({ lease_id: lease.id, type: 'allocation.end_error' });
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0].message).toMatch(/ironic/i);
  });
});
