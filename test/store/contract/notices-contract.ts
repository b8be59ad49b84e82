import { describe, expect, it } from 'vitest';
import { ConflictError } from '../../../src/domain/errors.js';
import { HOUR, at, nodeRecord, type OpenFreshStore, useFreshStores } from './fixtures.js';

/** The NoticeStore part of the contract (store.notices): notices once per lease, offset and end; auto-renew once. */
export function noticesContract(open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  async function setup() {
    const store = await fresh();
    await store.createProject({ name: 'owners' }, at(0));
    const lessee = await store.createProject({ name: 'lessees' }, at(0));
    await store.syncNodes(['n1', 'n2'].map((id) => nodeRecord(id, { owner: 'owners' })), at(0));
    const lease = (startH: number, endH: number, node = 'n1') =>
      store.leasing.createLease(
        {
          name: 'l',
          project_id: lessee.id,
          created_by: null,
          start: at(startH * HOUR),
          end: at(endH * HOUR),
          request: { nodes: [node] },
          allocations: [{ node_id: node, group_index: 0 }],
          cleaning_gap_ms: 0,
          max_nodes: null,
        },
        [],
        at(0),
      );
    const endingSoon = async (leaseId: string) =>
      (await store.leasing.listEvents({ lease_id: leaseId, type: 'lease.ending_soon' }, { limit: 100 })).items.map((e) => e.details);
    return { store, lessee, lease, endingSoon };
  }

  describe('notices before a lease ends', () => {
    it('writes each due notice once with its event, even when called side by side', async () => {
      const { store, lease, endingSoon } = await setup();
      const l = await lease(0, 10);
      expect(await store.notices.sendDueNotices(at(8 * HOUR), [HOUR])).toBe(0);
      const counts = await Promise.all([1, 2, 3, 4].map(() => store.notices.sendDueNotices(at(9 * HOUR), [HOUR])));
      expect(counts.reduce((a, b) => a + b, 0)).toBe(1);
      expect(await store.notices.sendDueNotices(at(9.5 * HOUR), [HOUR])).toBe(0);
      expect(await endingSoon(l.id)).toEqual([{ end: at(10 * HOUR).toISOString(), offset: 'PT1H', ends_in: 'PT1H', covers: ['PT1H'] }]);
      expect(await store.notices.sentNotices([{ id: l.id, end: l.end }])).toEqual(new Map([[l.id, new Map([[HOUR, at(9 * HOUR)]])]]));
    });

    it('a new end has notices of its own, and the notices of other ends are forgotten', async () => {
      const { store, lease, endingSoon } = await setup();
      const l = await lease(0, 10);
      await store.notices.sendDueNotices(at(9 * HOUR), [HOUR]);
      const moved = await store.leasing.changeLeaseEnd(l.id, at(12 * HOUR), 0, [], at(9 * HOUR));
      expect(await store.notices.sentNotices([{ id: l.id, end: moved.end }])).toEqual(new Map());
      expect(await store.notices.sendDueNotices(at(11 * HOUR), [HOUR])).toBe(1);
      expect((await endingSoon(l.id)).map((d) => d.end)).toEqual([at(12 * HOUR).toISOString(), at(10 * HOUR).toISOString()]);
    });

    it('sends nothing for a lease that ended or was cancelled', async () => {
      const { store, lease } = await setup();
      const cancelled = await lease(5, 10);
      await store.leasing.cancelLease(cancelled.id, [], at(HOUR));
      expect(await store.notices.sendDueNotices(at(9 * HOUR), [HOUR])).toBe(0);
      expect(await store.notices.sendDueNotices(at(10 * HOUR), [2 * HOUR])).toBe(0);
    });

    it("uses a project's own offsets over the default", async () => {
      const { store, lessee, lease, endingSoon } = await setup();
      await store.updateProject(lessee.id, { notice_offsets_ms: [3 * HOUR] }, at(0));
      expect((await store.findProject(lessee.id))?.notice_offsets_ms).toEqual([3 * HOUR]);
      const l = await lease(0, 10);
      expect(await store.notices.sendDueNotices(at(6.5 * HOUR), [HOUR])).toBe(0);
      expect(await store.notices.sendDueNotices(at(9.5 * HOUR), [HOUR])).toBe(1);
      expect((await endingSoon(l.id)).map((d) => d.offset)).toEqual(['PT3H']);
    });
  });

  describe('auto-renew', () => {
    it('is set on a lease, due a step before its end, and finished once for the end it was found at', async () => {
      const { store, lease } = await setup();
      const l = await lease(0, 10);
      const on = await store.notices.setAutoRenew(l.id, { step_ms: 2 * HOUR, until: at(20 * HOUR) }, [], at(0));
      expect(on.auto_renew).toEqual({ step_ms: 2 * HOUR, until: at(20 * HOUR), state: 'on', rule: null, message: null });
      expect(await store.notices.dueRenewals(at(7 * HOUR), 10)).toEqual([]);
      expect(await store.notices.dueRenewals(at(8 * HOUR), 10)).toEqual([l.id]);
      const outcome = { state: 'stopped', rule: 'next_booking', message: 'booked' } as const;
      expect(await store.notices.finishAutoRenew(l.id, at(9 * HOUR), outcome, [], at(8 * HOUR))).toBe(false);
      const results = await Promise.all([1, 2].map(() => store.notices.finishAutoRenew(l.id, at(10 * HOUR), outcome, [], at(8 * HOUR))));
      expect(results.sort()).toEqual([false, true]);
      expect((await store.leasing.getLease(l.id))?.auto_renew).toMatchObject({ state: 'stopped', rule: 'next_booking', message: 'booked' });
      expect(await store.notices.dueRenewals(at(9 * HOUR), 10)).toEqual([]);
      const off = await store.notices.setAutoRenew(l.id, null, [], at(8 * HOUR));
      expect(off.auto_renew).toBeNull();
    });

    it('a change of the end computed from an end that moved meanwhile changes nothing', async () => {
      const { store, lease } = await setup();
      const l = await lease(0, 10);
      await store.leasing.changeLeaseEnd(l.id, at(11 * HOUR), 0, [], at(HOUR), null, null, at(10 * HOUR));
      await expect(store.leasing.changeLeaseEnd(l.id, at(12 * HOUR), 0, [], at(HOUR), null, null, at(10 * HOUR))).rejects.toBeInstanceOf(ConflictError);
      expect((await store.leasing.getLease(l.id))?.end).toEqual(at(11 * HOUR));
    });
  });
}
