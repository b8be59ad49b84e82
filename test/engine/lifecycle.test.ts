import { afterEach, describe, expect, it } from 'vitest';
import { BackendUnavailableError, NodeBusyError } from '../../src/domain/errors.js';
import { PowerState } from '../../src/drivers/hardware-driver.js';
import { HOUR, MINUTE, NODE_IDS, allocationState, at, harness, nodeSpec, runUntil } from './helpers.js';
import type { Harness } from './helpers.js';

const [N1, N2] = NODE_IDS;
let h: Harness;
afterEach(async () => h?.close());

describe('lease engine: start', () => {
  it('at its start a lease hands the node to the lessee (in Ironic and in the stored node) and becomes active', async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(HOUR), end: at(2 * HOUR), nodes: [N1] });

    expect(await engine.runDue()).toBe(0);
    expect((await h.sim.getNode(N1)).lessee).toBeNull();

    await h.clock.advanceTo(at(HOUR));
    expect(await engine.runDue()).toBe(1);
    const node = await h.sim.getNode(N1);
    expect(node.lessee).toBe(h.lesseeId);
    expect(node.extra.leasehold_lease).toBe(lease.id);
    expect((await h.store.getNode(N1, { kind: 'all' }))?.lessee).toBe(h.lesseeId);
    const after = await h.lease(lease.id);
    expect(after.state).toBe('active');
    expect(after.allocations.map((a) => [a.state, a.step])).toEqual([['active', null]]);
    const events = await h.events(lease.id);
    expect(events.map((e) => e.type)).toEqual(['allocation.started', 'lease.active']);
    expect(events[0]).toMatchObject({ actor: 'engine', actor_user_id: null, node_id: N1, project_id: h.lesseeId, owner_project_id: h.ownerId, outcome: 'ok' });
    expect(h.spy.actions(N1)).toEqual([`updateNode {"lessee":"${h.lesseeId}","extra":{"leasehold_lease":"${lease.id}"}}`]);

    // Running again (a duplicate claim after a crash) changes nothing and writes no second event.
    expect(await engine.runDue()).toBe(0);
    expect((await h.events(lease.id)).length).toBe(2);
  });

  it('a lease on several nodes is active only once every node is handed over', async () => {
    h = await harness({ nodes: [nodeSpec(0), nodeSpec(1)] });
    const engine = h.engine({ batch: 1 });
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1, N2] });
    h.sim.setFaults({ unavailable: true });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    expect((await h.lease(lease.id)).state).toBe('pending');
    h.sim.setFaults({ unavailable: false });
    await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'active');
    expect(await allocationState(h, lease.id)).toEqual(['active', 'active']);
  });

  it('a node that vanished from Ironic before the start drops its allocation, and a lease left with none has failed', async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    h.sim.removeNode(N1);
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    const after = await h.lease(lease.id);
    expect(after.state).toBe('failed');
    expect(after.allocations[0]).toMatchObject({ state: 'cancelled', last_error: expect.stringContaining('not found') });
    const types = (await h.events(lease.id)).map((e) => [e.type, e.outcome]);
    expect(types).toEqual([['allocation.start_failed', 'error'], ['lease.failed', 'error']]);
    // The end task has nothing to release.
    await h.clock.advanceTo(at(HOUR));
    expect(await engine.runDue()).toBe(1);
    expect((await h.lease(lease.id)).state).toBe('failed');
  });
});

describe('lease engine: end', () => {
  it('at the end the lessee is cleared, the node powered off, cleaned and available; the allocation is released and the lease ended', async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    // The lessee uses the node: power on, serial console on.
    await h.sim.setPowerState(N1, 'power on');
    await h.clock.advance(10);
    await h.sim.setConsoleEnabled(N1, true);
    await h.clock.advance(10);
    expect(await h.sim.getNode(N1)).toMatchObject({ power_state: PowerState.On, console_enabled: true });
    h.spy.calls.length = 0;

    await h.clock.advanceTo(at(HOUR));
    await engine.runDue();
    expect((await h.lease(lease.id)).state).toBe('ending');
    expect((await h.lease(lease.id)).allocations[0]?.state).toBe('releasing');
    const took = await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'ended');
    expect(took).toBeLessThanOrEqual(10_000);

    const node = await h.sim.getNode(N1);
    expect(node).toMatchObject({ lessee: null, provision_state: 'available', power_state: PowerState.Off, console_enabled: false });
    expect(node.extra.leasehold_lease).toBeUndefined();
    expect(await h.store.getNode(N1, { kind: 'all' })).toMatchObject({ lessee: null, provision_state: 'available', quarantined_at: null });
    expect((await h.lease(lease.id)).allocations[0]).toMatchObject({ state: 'released', step: null, last_error: null });
    expect(h.spy.actions(N1)).toEqual([
      'updateNode {"lessee":null,"extra":{"leasehold_lease":null}}',
      'setConsoleEnabled false',
      'setPowerState power off',
      'setProvisionState manage',
      'setProvisionState provide',
    ]);
    const types = (await h.events(lease.id)).map((e) => e.type);
    expect(types.slice(2)).toEqual([
      'allocation.releasing',
      'lease.ending',
      'node.lessee_cleared',
      'node.console_disabled',
      'node.power_off',
      'node.manage',
      'node.cleaning_started',
      'allocation.released',
      'lease.ended',
    ]);
  });

  it('at the end the lessee is cleared by the first call to Ironic, with no read of the node before it', async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    h.spy.calls.length = 0;
    await h.clock.advanceTo(at(HOUR));
    await engine.runDue();
    // The hand-over recorded the node as Ironic answered: the clear is built from that record.
    expect(h.spy.calls.filter((c) => c.args[0] === N1).map((c) => c.method)[0]).toBe('updateNode');
    expect((await h.sim.getNode(N1)).lessee).toBeNull();
    expect((await h.store.getNode(N1, { kind: 'all' }))?.lessee).toBeNull();
    await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'ended');
    expect((await h.events(lease.id)).filter((e) => e.type === 'node.lessee_cleared')).toHaveLength(1);
  });

  it('an end cut off after Ironic cleared the lessee, before the record, does not clear it again when it runs again', async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    const clear = h.sim.updateNode.bind(h.sim);
    let cutOff = true;
    h.sim.updateNode = async (...args: Parameters<typeof clear>) => {
      const node = await clear(...args);
      if (cutOff && args[1].lessee === null) {
        cutOff = false;
        throw new BackendUnavailableError('the connection dropped after Ironic answered');
      }
      return node;
    };
    await h.clock.advanceTo(at(HOUR));
    await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'ended');
    expect(h.spy.actions(N1).filter((a) => a.startsWith('updateNode {"lessee":null'))).toHaveLength(1);
    expect((await h.sim.getNode(N1)).lessee).toBeNull();
    // The run that cleared it failed before it could say so (allocation.end_error); the next found nothing to clear.
    const types = (await h.events(lease.id)).map((e) => e.type);
    expect(types.filter((t) => t === 'node.lessee_cleared').length).toBeLessThanOrEqual(1);
    expect(types.filter((t) => t === 'allocation.released')).toHaveLength(1);
  });

  it('a record that shows no mark of the lease (another lease\'s) sends the clear the way of a read, which leaves the other mark alone', async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    // Someone marked the node for another lease in Ironic behind Leasehold's back, and a sync recorded it.
    await h.sim.updateNode(N1, { lessee: 'someone-else', extra: { leasehold_lease: 'another-lease' } });
    await h.inventory.refreshNode(N1);
    h.spy.calls.length = 0;
    await h.clock.advanceTo(at(HOUR));
    await engine.runDue();
    expect(h.spy.calls.filter((c) => c.args[0] === N1).map((c) => c.method)[0]).toBe('getNode');
    expect(await h.sim.getNode(N1)).toMatchObject({ lessee: 'someone-else', extra: { leasehold_lease: 'another-lease' } });
    expect((await h.lease(lease.id)).allocations[0]?.state).toBe('releasing');
  });

  it('a node the lessee deployed is undeployed (tear down, then cleaning) at the end', async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    await h.sim.setProvisionState(N1, 'active');
    await h.clock.advance(100);
    expect((await h.sim.getNode(N1)).provision_state).toBe('active');
    h.spy.calls.length = 0;

    await h.clock.advanceTo(at(HOUR));
    await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'ended');
    expect((await h.sim.getNode(N1)).provision_state).toBe('available');
    expect(h.spy.actions(N1)).toEqual([
      'updateNode {"lessee":null,"extra":{"leasehold_lease":null}}',
      'setPowerState power off',
      'setProvisionState deleted',
    ]);
    expect((await h.events(lease.id)).map((e) => e.type)).toContain('node.undeploy');
  });

  it('a cleaning failure quarantines the node with Ironic last_error in the event, and the lease still ends', async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    h.sim.setFaults({ cleanFailure: [N1] });

    await h.clock.advanceTo(at(HOUR));
    await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'ended');
    const node = await h.sim.getNode(N1);
    expect(node.provision_state).toBe('clean failed');
    expect(node.last_error).toBeTruthy();
    const allocation = (await h.lease(lease.id)).allocations[0];
    expect(allocation).toMatchObject({ state: 'quarantined', last_error: node.last_error });
    const stored = await h.store.getNode(N1, { kind: 'all' });
    expect(stored?.quarantined_at).toEqual(expect.any(Date));
    expect(stored?.quarantine_reason).toBe(node.last_error);

    const events = await h.events(lease.id);
    const quarantined = events.find((e) => e.type === 'node.quarantined');
    expect(quarantined).toMatchObject({ outcome: 'error', node_id: N1, owner_project_id: h.ownerId });
    expect(quarantined?.details).toMatchObject({ last_error: node.last_error, provision_state: 'clean failed' });
    expect(events.find((e) => e.type === 'lease.node_quarantined')).toMatchObject({ outcome: 'error', lease_id: lease.id });
    expect(events.at(-1)?.type).toBe('lease.ended');
  });

  it('while Ironic is unreachable the end is retried with backoff, reported on the first and every tenth failure, and completes once it is back', async () => {
    h = await harness();
    const engine = h.engine({ retry: { baseMs: 1_000, maxMs: 8_000 } });
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();

    h.sim.setFaults({ unavailable: true });
    await h.clock.advanceTo(at(HOUR));
    // Runs happen at the backoff times only: 1 s, 2 s, 4 s, 8 s, 8 s, … after each failure.
    const runsAt: number[] = [];
    for (let t = 0; t <= 60_000; t += 500) {
      if ((await engine.runDue()) > 0) runsAt.push(t);
      await h.clock.advance(500);
    }
    expect(runsAt.slice(0, 6)).toEqual([0, 1_000, 3_000, 7_000, 15_000, 23_000]);
    const failures = runsAt.length;
    expect(failures).toBeGreaterThanOrEqual(10);
    const errors = (await h.events(lease.id)).filter((e) => e.type === 'allocation.end_error');
    expect(errors.map((e) => e.details.failures)).toEqual(failures >= 20 ? [1, 10, 20] : [1, 10]);
    expect(errors[0]).toMatchObject({ outcome: 'error', node_id: N1, message: expect.stringContaining('unreachable') });
    expect((await h.lease(lease.id)).allocations[0]).toMatchObject({ state: 'releasing', last_error: expect.stringContaining('unreachable') });

    h.sim.setFaults({ unavailable: false });
    await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'ended');
    expect(await h.sim.getNode(N1)).toMatchObject({ lessee: null, provision_state: 'available' });
    expect((await h.lease(lease.id)).allocations[0]).toMatchObject({ state: 'released', last_error: null });
  });

  it('a node busy with another operation delays the step and the release goes on once it is free', async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    let busy = 3;
    h.spy.hook = async (method) => {
      if (method === 'setPowerState' || method === 'setProvisionState') {
        if (busy-- > 0) {
          throw new NodeBusyError(`Node ${N1} is locked by host simulated, please retry after the current operation is completed.`);
        }
      }
    };
    await h.sim.setPowerState(N1, 'power on');
    await h.clock.advance(10);
    await h.clock.advanceTo(at(HOUR));
    await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'ended');
    expect((await h.sim.getNode(N1)).provision_state).toBe('available');
    expect((await h.events(lease.id)).filter((e) => e.type === 'allocation.end_error')).toHaveLength(1);
  });

  it('a lease that ended before the engine ever ran says why it never started, skips the hand-over and still cleans the node', async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(2 * HOUR));
    // The start (missed), the end's lessee step, and the rest of the release in its own queue.
    expect(await engine.runDue()).toBe(3);
    expect(h.spy.actions(N1).filter((a) => a.includes(h.lesseeId))).toEqual([]);
    await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'ended');
    expect(h.spy.actions(N1)).toContain('setProvisionState provide');
    const missed = (await h.events(lease.id)).filter((e) => e.type === 'allocation.start_missed');
    expect(missed).toHaveLength(1);
    expect(missed[0]).toMatchObject({ outcome: 'error', node_id: N1 });
    expect(missed[0]!.message).toContain(`the lease ended at ${at(HOUR).toISOString()} before node ${N1} could be handed over`);
    expect((await h.lease(lease.id)).allocations[0]).toMatchObject({ state: 'released', last_error: expect.stringMatching(/^never handed over: /) });
  });

  it('a lease whose end moved later keeps its node until the new end', async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    await h.store.leasing.changeLeaseEnd(lease.id, at(2 * HOUR), 0, [], h.clock.now());
    await h.clock.advanceTo(at(HOUR));
    expect(await engine.runDue()).toBe(0);
    expect((await h.sim.getNode(N1)).lessee).toBe(h.lesseeId);
    await h.clock.advanceTo(at(2 * HOUR));
    await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'ended');
    expect((await h.sim.getNode(N1)).lessee).toBeNull();
  });
});

describe('lease engine: one node, consecutive leases', () => {
  it('the next lease receives the node only after the previous lease cleaned it, even when cleaning overruns the gap', async () => {
    h = await harness();
    const engine = h.engine();
    const first = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    const second = await h.createLease({ start: at(HOUR), end: at(2 * HOUR), nodes: [N1], project: h.otherLesseeId });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    await h.clock.advanceTo(at(HOUR));
    await runUntil(h, engine, async () => (await h.lease(second.id)).state === 'active');
    expect((await h.lease(first.id)).state).toBe('ended');
    const actions = h.spy.actions(N1);
    const provided = actions.indexOf('setProvisionState provide');
    const handedOver = actions.findIndex((a) => a.includes(h.otherLesseeId));
    expect(provided).toBeGreaterThan(-1);
    expect(handedOver).toBeGreaterThan(provided);
    expect((await h.sim.getNode(N1)).lessee).toBe(h.otherLesseeId);
  });

  it('a node quarantined by a failed cleaning is not handed to the next lease', async () => {
    h = await harness();
    const engine = h.engine();
    const first = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    const second = await h.createLease({ start: at(HOUR), end: at(2 * HOUR), nodes: [N1], project: h.otherLesseeId });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    h.sim.setFaults({ cleanFailure: true });
    await h.clock.advanceTo(at(HOUR));
    await runUntil(h, engine, async () => (await h.lease(first.id)).state === 'ended');
    await h.clock.advance(10 * MINUTE);
    await engine.runDue();
    expect((await h.sim.getNode(N1)).lessee).toBeNull();
    expect((await h.lease(second.id)).state).toBe('pending');
  });
});
