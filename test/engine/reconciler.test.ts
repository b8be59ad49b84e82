import { afterEach, describe, expect, it, vi } from 'vitest';
import { PASS_LOCK_MS, Reconciler } from '../../src/engine/reconciler.js';
import type { ReconcilerOptions } from '../../src/engine/reconciler.js';
import { HOUR, MINUTE, NODE_IDS, at, harness, nodeSpec, runUntil, silentLogger } from './helpers.js';
import type { Harness } from './helpers.js';

const [N1, N2] = NODE_IDS;
let h: Harness;
const reconcilers: Reconciler[] = [];
afterEach(async () => {
  await Promise.all(reconcilers.splice(0).map((r) => r.stop()));
  await h?.close();
});

function reconciler(over: Partial<ReconcilerOptions> = {}): Reconciler {
  const r = new Reconciler({
    store: h.store,
    driver: h.spy.driver,
    clock: h.clock,
    logger: silentLogger,
    inventory: h.inventory,
    intervalMs: 30_000,
    ...over,
  });
  reconcilers.push(r);
  return r;
}

async function eventsOfType(type: string) {
  return (await h.store.leasing.listEvents({ type }, { limit: 100 })).items;
}

describe('reconciliation with Ironic', () => {
  it('a lessee set by hand in Ironic on a node no lease holds is cleared and the repair is an event the owner sees', async () => {
    h = await harness();
    await h.sim.updateNode(N1, { lessee: 'someone-else' });
    const result = await reconciler().reconcile();
    expect(result.applied).toBe(1);
    expect((await h.sim.getNode(N1)).lessee).toBeNull();
    expect((await h.store.getNode(N1, { kind: 'all' }))?.lessee).toBeNull();
    const [event] = await eventsOfType('reconcile.lessee_cleared');
    expect(event).toMatchObject({
      node_id: N1,
      owner_project_id: h.ownerId,
      actor: 'engine',
      details: { found_lessee: 'someone-else', found_lease_mark: null, reason: 'no_lease' },
    });
    // Nothing left to do: a second pass repairs nothing and logs nothing.
    expect((await reconciler().reconcile()).repairs).toEqual([]);
    expect(await eventsOfType('reconcile.lessee_cleared')).toHaveLength(1);
  });

  it('a lessee changed by hand during an active lease is set back to the lessee project', async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    await h.sim.updateNode(N1, { lessee: 'intruder' });

    await reconciler().reconcile();
    const node = await h.sim.getNode(N1);
    expect([node.lessee, node.extra.leasehold_lease]).toEqual([h.lesseeId, lease.id]);
    const [event] = await eventsOfType('reconcile.lessee_restored');
    expect(event).toMatchObject({ lease_id: lease.id, project_id: h.lesseeId, node_id: N1, details: { found_lessee: 'intruder' } });
  });

  it('a lessee left behind when no engine ran at the end (a crash) is cleared once the end is past the grace', async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(10 * MINUTE), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    await engine.stop(); // the process died: nobody runs the end task

    await h.clock.advanceTo(at(10 * MINUTE + 5_000));
    const r = reconciler();
    expect((await r.reconcile()).repairs).toEqual([]); // within the grace: the end task's to do
    await h.clock.advanceTo(at(10 * MINUTE + 20_000));
    await r.reconcile();
    expect((await h.sim.getNode(N1)).lessee).toBeNull();
    const [event] = await eventsOfType('reconcile.lessee_cleared');
    expect(event).toMatchObject({ lease_id: lease.id, details: { reason: 'lease_over', found_lease_mark: lease.id } });
  });

  it('a lease whose node vanished from Ironic drops that node and goes on with the others', async () => {
    h = await harness({ nodes: [nodeSpec(0), nodeSpec(1)] });
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1, N2] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    h.sim.removeNode(N2);

    await reconciler().reconcile();
    const after = await h.lease(lease.id);
    expect(after.state).toBe('active');
    expect(after.allocations.map((a) => [a.node_id, a.state])).toEqual(
      expect.arrayContaining([
        [N1, 'active'],
        [N2, 'cancelled'],
      ]),
    );
    const [event] = await eventsOfType('reconcile.node_vanished');
    expect(event).toMatchObject({ lease_id: lease.id, node_id: N2, outcome: 'error' });
  });

  it('a leased node going into maintenance and out again is announced to the lessee once each way', async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    h.sim.setMaintenance(N1, true, 'replacing a fan');
    const r = reconciler();
    await r.reconcile();
    await r.reconcile();
    const started = await eventsOfType('reconcile.node_maintenance');
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ lease_id: lease.id, project_id: h.lesseeId, details: { maintenance_reason: 'replacing a fan' } });
    h.sim.setMaintenance(N1, false);
    await r.reconcile();
    await r.reconcile();
    expect(await eventsOfType('reconcile.node_maintenance_cleared')).toHaveLength(1);
  });

  it('a pass is skipped while another replica is reconciling, and taken over if that replica died mid-pass', async () => {
    h = await harness();
    await h.sim.updateNode(N1, { lessee: 'someone-else' });
    expect(await h.store.tasks.tryLeaderLease('reconciler', 'replica-that-died', h.clock.now(), PASS_LOCK_MS)).toBe(true);
    const r = reconciler();
    expect((await r.reconcile()).skipped).toBe('busy');
    expect((await h.sim.getNode(N1)).lessee).toBe('someone-else');
    await h.clock.advance(PASS_LOCK_MS);
    expect((await r.reconcile()).skipped).toBeNull();
    expect((await h.sim.getNode(N1)).lessee).toBeNull();
    // Passes hand the lock back: the next one (from any replica) runs at once.
    expect((await reconciler().reconcile()).skipped).toBeNull();
  });

  it('a slow pass keeps its lock for as long as it runs; another replica waits rather than repairing the same drift', async () => {
    h = await harness();
    await h.sim.updateNode(N1, { lessee: 'someone-else' });
    let release: (() => void) | null = null;
    h.spy.hook = (method) => (method === 'listNodes' ? new Promise<void>((resolve) => (release = resolve)) : undefined);
    const slow = reconciler().reconcile();
    await vi.waitFor(() => expect(release).not.toBeNull());
    for (let s = 0; s < 4; s++) {
      await h.clock.advance(PASS_LOCK_MS);
      expect((await reconciler().reconcile()).skipped).toBe('busy');
    }
    h.spy.hook = null;
    release!();
    expect((await slow).skipped).toBeNull();
    expect((await reconciler().reconcile()).skipped).toBeNull();
  });

  it('once Ironic answers again, lease tasks waiting out a backoff run at once', async () => {
    h = await harness();
    const engine = h.engine({ retry: { baseMs: 60_000, maxMs: 60_000 } });
    const lease = await h.createLease({ start: at(MINUTE), end: at(2 * MINUTE), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    h.sim.setFaults({ unavailable: true });
    await h.clock.advanceTo(at(2 * MINUTE));
    await engine.runDue(); // the end fails: retried in a minute
    const r = reconciler({ engine });
    await expect(r.reconcile()).rejects.toThrow();
    r.start(); // the failing pass counts: the next success is a recovery
    await new Promise((resolve) => setTimeout(resolve, 20));
    h.sim.setFaults({ unavailable: false });
    // A few seconds of the clock, far less than the minute of backoff.
    const took = await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'ended', { stepMs: 500, maxSteps: 20 });
    expect(took).toBeLessThan(10_000);
  });
});
