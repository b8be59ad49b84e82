import { afterEach, describe, expect, it } from 'vitest';
import { AttachmentState } from '../../src/domain/networks.js';
import { Reconciler } from '../../src/engine/reconciler.js';
import { STALE_ATTACHMENT_MS } from '../../src/engine/network-reconcile.js';
import { createLogger } from '../../src/logger.js';
import { NetworkService, type NetworkActor } from '../../src/networking/network-service.js';
import { HOUR, MINUTE, NODE_IDS, at, harness, nodeSpec, runUntil, silentLogger } from './helpers.js';
import type { Harness } from './helpers.js';

const [N1, N2] = NODE_IDS;
let h: Harness;
afterEach(async () => {
  await h?.close();
});

function service(): NetworkService {
  return new NetworkService({ store: h.store, driver: h.spy.driver, networks: h.networks, teardown: h.teardown, clock: h.clock, logger: createLogger('silent') });
}

function actor(project: string, over: Partial<NetworkActor> = {}): NetworkActor {
  return { node_id: N1, project_id: project, admin: false, owner: false, lease_id: null, user_name: 'tester', user_id: null, ...over };
}

const vifsOn = async (node: string) => (await h.sim.listNics(node)).flatMap((n) => (n.vif ? [n.vif] : []));

function reconciler(): Reconciler {
  return new Reconciler({ store: h.store, driver: h.spy.driver, clock: h.clock, logger: silentLogger, inventory: h.inventory, intervalMs: 30_000, networks: h.teardown });
}

describe('tenant networks and the lease engine', () => {
  it("at a lease end every network the lessee attached is detached and Leasehold's ports deleted before cleaning starts; the owner's stays", async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    const lab = h.networks.createNetwork({ name: 'lab', project_id: h.lesseeId });
    const mgmt = h.networks.createNetwork({ name: 'mgmt', project_id: h.ownerId });
    const lessee = actor(h.lesseeId, { lease_id: lease.id });
    const made = await service().attach(lessee, { network: 'lab' });
    const owners = await service().attach(actor(h.ownerId, { owner: true }), { network: mgmt.id });
    expect(await vifsOn(N1)).toEqual(expect.arrayContaining([made.port_id, owners.port_id]));
    void lab;

    h.spy.calls.length = 0;
    await h.clock.advanceTo(at(HOUR));
    await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'ended');
    const actions = h.spy.actions(N1);
    const detach = actions.findIndex((a) => a.startsWith(`detachVif ${made.port_id}`));
    const clean = actions.findIndex((a) => a.startsWith('setProvisionState'));
    expect(detach).toBeGreaterThanOrEqual(0);
    expect(detach).toBeLessThan(clean);
    expect(actions.filter((a) => a.startsWith('detachVif')).map((a) => a.split(' ')[1])).toEqual([made.port_id]);
    expect(await vifsOn(N1)).toEqual([owners.port_id]);
    expect(await h.networks.getPort(made.port_id!)).toBeNull();
    expect(await h.networks.getPort(owners.port_id!)).not.toBeNull();
    expect((await h.store.networks.get(made.id))?.state).toBe(AttachmentState.Detached);
    const types = (await h.events(lease.id)).map((e) => e.type);
    expect(types.indexOf('node.network_detached')).toBeGreaterThan(types.indexOf('node.lessee_cleared'));
    expect(types.indexOf('node.network_detached')).toBeLessThan(types.indexOf('node.cleaning_started'));
  });

  it("a VIF the lessee plugged in through Ironic (its own port) is taken off too, and its port is left to it", async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    const lab = h.networks.createNetwork({ name: 'lab', project_id: h.lesseeId });
    const own = await h.networks.createPort({ network_id: lab.id, project_id: h.lesseeId, name: 'mine' });
    await h.sim.attachVif(N1, own.id); // behind Leasehold's back: no attachment row
    await h.clock.advanceTo(at(HOUR));
    await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'ended');
    expect(await vifsOn(N1)).toEqual([]);
    expect(await h.networks.getPort(own.id)).not.toBeNull();
    expect((await h.events(lease.id)).map((e) => e.type)).toContain('node.vif_removed');
  });

  it('a crash between two detaches resumes where it stopped: each VIF is unplugged once, each port deleted once, then cleaning', async () => {
    h = await harness();
    const first = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await first.runDue();
    h.networks.createNetwork({ name: 'a', project_id: h.lesseeId });
    h.networks.createNetwork({ name: 'b', project_id: h.lesseeId });
    const lessee = actor(h.lesseeId, { lease_id: lease.id });
    const a = await service().attach(lessee, { network: 'a' });
    const b = await service().attach(lessee, { network: 'b' });

    // The process dies as it is about to unplug the second VIF (the call never reaches Ironic).
    let detaches = 0;
    h.spy.hook = (method) => {
      if (method === 'detachVif' && ++detaches === 2) throw new Error('process killed');
    };
    h.spy.calls.length = 0;
    await h.clock.advanceTo(at(HOUR));
    await first.runDue();
    await first.stop();
    h.spy.hook = null;
    expect((await h.lease(lease.id)).allocations[0]).toMatchObject({ state: 'releasing', step: 'detach_networks' });
    const left = await vifsOn(N1);
    expect(left).toHaveLength(1);
    expect([a.port_id, b.port_id]).toContain(left[0]);

    // Another worker takes the task over once the claim has expired.
    const second = h.engine({ workerId: 'second' });
    await h.clock.advance(MINUTE);
    await runUntil(h, second, async () => (await h.lease(lease.id)).state === 'ended');
    const actions = h.spy.actions(N1);
    const unplugs = (port: string | null) => actions.filter((x) => x.startsWith(`detachVif ${port} `));
    expect(unplugs(a.port_id)).toHaveLength(1);
    expect(unplugs(b.port_id)).toHaveLength(1);
    expect(actions.findIndex((x) => x.startsWith(`detachVif ${left[0]} `))).toBeLessThan(actions.findIndex((x) => x.startsWith('setProvisionState')));
    expect(await vifsOn(N1)).toEqual([]);
    expect(h.networks.allPorts()).toEqual([]);
    const detached = (await h.events(lease.id)).filter((e) => e.type === 'node.network_detached');
    expect(detached).toHaveLength(2);
  });
});

describe('tenant networks and the reconciler', () => {
  it("a VIF plugged in behind Leasehold's back on a node nobody leases is removed, with an event; the owner's own stays", async () => {
    h = await harness({ nodes: [nodeSpec(0), nodeSpec(1)] });
    const theirs = h.networks.createNetwork({ name: 'x', project_id: h.otherLesseeId });
    const mine = h.networks.createNetwork({ name: 'owner-net', project_id: h.ownerId });
    const stray = await h.networks.createPort({ network_id: theirs.id, project_id: h.otherLesseeId, name: 'stray' });
    const owned = await h.networks.createPort({ network_id: mine.id, project_id: h.ownerId, name: 'owned' });
    await h.sim.attachVif(N2, stray.id);
    await h.sim.attachVif(N2, owned.id);
    const result = await reconciler().reconcile();
    expect(result.networks).toEqual({ finished: 0, removed: 1 });
    expect(await vifsOn(N2)).toEqual([owned.id]);
    const [event] = (await h.store.leasing.listEvents({ type: 'reconcile.vif_removed' }, { limit: 10 })).items;
    expect(event).toMatchObject({ node_id: N2, actor: 'engine', details: { vif: stray.id, port_project_id: h.otherLesseeId, reason: 'not_holders' } });
    expect((await reconciler().reconcile()).networks).toEqual({ finished: 0, removed: 0 });
  });

  it("a lessee's VIF on the node it leases now stays; once the lease is over, a leftover one is removed", async () => {
    h = await harness();
    const engine = h.engine();
    const lease = await h.createLease({ start: at(MINUTE), end: at(HOUR), nodes: [N1] });
    await h.clock.advanceTo(at(MINUTE));
    await engine.runDue();
    const lab = h.networks.createNetwork({ name: 'lab', project_id: h.lesseeId });
    const port = await h.networks.createPort({ network_id: lab.id, project_id: h.lesseeId, name: 'p' });
    await h.sim.attachVif(N1, port.id);
    expect((await reconciler().reconcile()).networks.removed).toBe(0);
    await h.clock.advanceTo(at(HOUR));
    await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'ended');
    // Plugged in again after the release (by someone with Ironic's own credentials): the reconciler takes it off.
    await h.sim.attachVif(N1, port.id);
    expect((await reconciler().reconcile()).networks.removed).toBe(1);
    expect(await vifsOn(N1)).toEqual([]);
  });

  it('an attach interrupted half-way (its replica died) is finished by the reconciler: the port it created is deleted', async () => {
    h = await harness();
    const lab = h.networks.createNetwork({ name: 'lab', project_id: h.ownerId });
    const port = await h.networks.createPort({ network_id: lab.id, project_id: h.ownerId, name: 'half' });
    const row = await h.store.networks.create(
      { node_id: N1, project_id: h.ownerId, lease_id: null, network_id: lab.id, network_name: 'lab', segmentation_id: lab.segmentation_id, state: AttachmentState.Attaching, created_by: 'x' },
      [],
      h.clock.now(),
    );
    await h.store.networks.update(row.id, { port_id: port.id, port_created: true }, [], h.clock.now());
    expect((await reconciler().reconcile()).networks.finished).toBe(0); // still young: it may be running
    await h.clock.advance(STALE_ATTACHMENT_MS + 1);
    expect((await reconciler().reconcile()).networks.finished).toBe(1);
    expect(await h.networks.getPort(port.id)).toBeNull();
    expect((await h.store.networks.get(row.id))?.state).toBe(AttachmentState.Failed);
  });
});
