/**
 * Sub-leasing (issue 16, item 6) with a real Ironic behind the real `leasehold serve` process: a lessee offers a
 * node it holds to another project, which leases it and becomes Ironic's `lessee`; when the parent lease ends,
 * the sub-lease ends at the same instant, the sub-lessee loses Ironic's `lessee` and the node is cleaned once.
 * Prints `[figures]` for the cut.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ironicAvailable } from '../support/ironic.js';
import { Figures } from '../support/figures.js';
import { until, type Api } from '../support/http.js';
import { availableAgain, nodeSpec, useIronicSuite } from '../support/ironic-leasehold.js';

const avail = ironicAvailable();

const NODES = [nodeSpec('sub-1', { memory_gib: 128, cpus: 32, local_gb: 960 }, { owner: 'ops-lab' })];

describe.skipIf(!avail.ok)('sub-leasing on a real Ironic', () => {
  const figures = new Figures('sublease');
  const s = useIronicSuite(NODES, { ironic: { auth: 'http_basic' }, owner: ['ops-lab', 'olga'], tenant: ['tenant-lab', 'tara'], figures });
  let sub: Api;
  beforeAll(async () => {
    // Registered after the suite's own beforeAll, so it runs after it: the server is up.
    sub = await s.lh.member('sub-lab', 'sam');
  });

  it('a sub-lease is cut when the parent lease ends: the sub-lessee loses Ironic\'s lessee at that instant and the node is cleaned', async () => {
    const id = s.uuid['sub-1']!;
    const parent = await s.tenant.ok('POST', '/v1/leases', { name: 'parent', nodes: ['sub-1'], duration: '10m' });
    await s.watch.waitFor(id, (n) => n.lessee === parent.project_id, { timeoutMs: 10_000, what: 'with the lessee' });

    const offer = await s.tenant.ok('POST', '/v1/offers', { node_id: 'sub-1', allowed_projects: ['sub-lab'] });
    expect(offer).toMatchObject({ sublease_of: parent.id, project_id: parent.project_id, end: parent.end });
    const sublease = await sub.ok('POST', '/v1/leases', { name: 'sublease', nodes: ['sub-1'], duration: '5m' });
    expect(sublease.allocations).toMatchObject([{ node_id: id, sublease_of: { lease_id: parent.id } }]);
    const handed = await s.watch.waitFor(id, (n) => n.lessee === sublease.project_id && n.extra.leasehold_lease === sublease.id, {
      timeoutMs: 10_000,
      what: 'with the sub-lessee',
    });
    figures.add('sublease_handover_s', 'sub-lease booked → sub-lessee is Ironic\'s lessee', Math.round((handed - Date.parse(sublease.created_at)) / 100) / 10, 's');
    // The lessee that offered it has no access meanwhile; the owner sees the chain.
    expect((await s.tenant.call('GET', `/v1/nodes/${id}`)).status).toBe(404);
    expect((await sub.call('GET', `/v1/nodes/${id}`)).status).toBe(200);
    expect((await s.owner.ok('GET', `/v1/nodes/${id}`)).lease).toMatchObject({ id: sublease.id, sublease_of: { lease_id: parent.id } });
    expect((await s.owner.ok('GET', `/v1/leases/${parent.id}`)).allocations[0].subleases).toMatchObject([{ lease_id: sublease.id }]);

    const before = s.watch.latest(id);
    const ended = await s.tenant.ok('DELETE', `/v1/leases/${parent.id}`);
    const cutAt = Date.now();
    // The sub-lease ends at the very instant its parent does, and its lessee's access with it.
    const cut = await sub.ok('GET', `/v1/leases/${sublease.id}`);
    expect(cut.end).toBe(ended.end);
    expect((await sub.call('GET', `/v1/nodes/${id}`)).status).toBe(404);
    const power = await sub.call('POST', `/v1/nodes/${id}/power`, { action: 'off' });
    expect(power.status).toBe(404);

    const cleared = await s.watch.waitFor(id, (n) => n.lessee === null, { since: cutAt, timeoutMs: 10_000, what: 'with the lessee cleared' });
    const available = await s.watch.waitFor(id, availableAgain(before), { since: cutAt, timeoutMs: 30_000, what: 'cleaned and available' });
    figures.add('sublease_cut_lessee_cleared_s', 'parent ended → sub-lessee no longer Ironic\'s lessee', Math.round((cleared - cutAt) / 100) / 10, 's');
    figures.add('sublease_cut_available_s', 'parent ended → node cleaned and available', Math.round((available - cutAt) / 100) / 10, 's');
    expect(cleared - cutAt).toBeLessThan(5_000);
    // Nobody was handed the node back in between: once the sub-lessee's mark was gone, no lessee came back.
    const lessees = s.watch.seen(id, cutAt).map((o) => o.node.lessee);
    const fromClear = lessees.slice(lessees.indexOf(null));
    expect(fromClear.every((l) => l === null)).toBe(true);

    await until(
      async () => (await s.tenant.ok('GET', `/v1/leases/${parent.id}`)).state === 'ended' && (await sub.ok('GET', `/v1/leases/${sublease.id}`)).state === 'ended',
      20_000,
      'both leases ended',
    );
    expect(await s.ironic.getNode(id)).toMatchObject({ lessee: null, provision_state: 'available' });
    expect((await sub.events({ lease_id: sublease.id, type: 'lease.sublease_ended' })).map((e) => e.details.parent_lease_id)).toEqual([parent.id]);
    expect((await s.tenant.events({ lease_id: parent.id, type: 'lease.sublease_ended' })).map((e) => e.details.sublease_id)).toEqual([sublease.id]);
    const handedBack = await sub.events({ lease_id: sublease.id, type: 'allocation.handed_back' });
    expect(handedBack).toHaveLength(1);
  });
});
