import { afterEach, describe, expect, it, vi } from 'vitest';
import { BackendUnavailableError } from '../../src/domain/errors.js';
import { PowerState } from '../../src/drivers/hardware-driver.js';
import { HOUR, MINUTE, NODE_IDS, at, harness, nodeSpec, runUntil } from './helpers.js';
import type { Harness } from './helpers.js';

const NODES = [...NODE_IDS];

/** The end events of one node's release, in order (lifecycle.test.ts shows the same for a lease alone). */
const RELEASE_EVENTS = [
  'allocation.releasing',
  'lease.ending',
  'node.lessee_cleared',
  'node.power_off',
  'node.manage',
  'node.cleaning_started',
  'allocation.released',
  'lease.ended',
];

describe('lease engine: ends handled in batches', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** One one-node lease per node, handed over, the nodes powered on by their lessees, all ending at one instant. */
  async function endingTogether() {
    h = await harness({ nodes: NODES.map((_, i) => nodeSpec(i)) });
    const leases = [];
    for (const node of NODES) leases.push(await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [node] }));
    return { h, leases };
  }

  it('leases ending at one instant are released together, each with the events and hardware calls of a lease ending alone', async () => {
    const { h, leases } = await endingTogether();
    const engine = h.engine();
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    for (const node of NODES) await h.sim.setPowerState(node, PowerState.On);
    await h.clock.advance(10);
    h.spy.calls.length = 0;
    const writes = vi.spyOn(h.store.tasks, 'updateAllocations');
    const contexts = vi.spyOn(h.store.tasks, 'allocationContexts');

    await h.clock.advanceTo(at(HOUR));
    await runUntil(h, engine, async () => (await Promise.all(leases.map((l) => h.lease(l.id)))).every((l) => l.state === 'ended'));
    // The runs of the three ends read and wrote together: one query and one transaction for all three at a time.
    expect(Math.max(...contexts.mock.calls.map(([ids]) => ids.length))).toBe(NODES.length);
    expect(Math.max(...writes.mock.calls.map(([batch]) => batch.length))).toBe(NODES.length);
    expect(h.spy.calls.filter((c) => c.method === 'updateNode')).toHaveLength(NODES.length);
    for (const [i, lease] of leases.entries()) {
      const events = await h.events(lease.id);
      expect(events.map((e) => e.type).slice(2)).toEqual(RELEASE_EVENTS);
      // Each event carries its own node, lease and lessee, whatever else its batch held.
      for (const e of events.filter((e) => e.type.startsWith('node.') || e.type.startsWith('allocation.'))) {
        expect(e).toMatchObject({ node_id: NODES[i], lease_id: lease.id, project_id: h.lesseeId, owner_project_id: h.ownerId, actor: 'engine' });
      }
      expect(h.spy.actions(NODES[i])).toEqual([
        'updateNode {"lessee":null,"extra":{"leasehold_lease":null}}',
        'setPowerState power off',
        'setProvisionState manage',
        'setProvisionState provide',
      ]);
    }
  });

  it("a batch with one node's hardware call failing releases the others and retries that one until it goes through", async () => {
    const { h, leases } = await endingTogether();
    const engine = h.engine({ retry: { baseMs: 1_000, maxMs: 8_000 } });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    for (const node of NODES) await h.sim.setPowerState(node, PowerState.On);
    await h.clock.advance(10);

    const failing = NODES[1]!;
    let refusals = 2;
    h.spy.hook = (method, args) => {
      if (method === 'setPowerState' && args[0] === failing && refusals > 0) {
        refusals--;
        throw new BackendUnavailableError('Ironic: power request timed out');
      }
    };
    await h.clock.advanceTo(at(HOUR));
    const others = leases.filter((_, i) => NODES[i] !== failing);
    const stuck = leases[NODES.indexOf(failing)]!;
    await runUntil(h, engine, async () => (await Promise.all(others.map((l) => h.lease(l.id)))).every((l) => l.state === 'ended'), { stepMs: 100 });
    expect((await h.lease(stuck.id)).allocations[0]).toMatchObject({ state: 'releasing', last_error: expect.stringContaining('timed out') });

    await runUntil(h, engine, async () => (await h.lease(stuck.id)).state === 'ended');
    const errors = (await h.events(stuck.id)).filter((e) => e.type === 'allocation.end_error');
    expect(errors.map((e) => e.details.failures)).toEqual([1]);
    expect((await h.lease(stuck.id)).allocations[0]).toMatchObject({ state: 'released', last_error: null });
    expect(h.spy.actions(failing).filter((a) => a === 'setPowerState power off')).toHaveLength(1);
    for (const lease of others) expect((await h.events(lease.id)).filter((e) => e.type.endsWith('_error'))).toEqual([]);
  });
});
