import { describe, expect, it } from 'vitest';
import { ConflictError } from '../../../src/domain/errors.js';
import { parseWeeklySchedule } from '../../../src/domain/scheduling/weekly-windows.js';
import type { NewOffer } from '../../../src/store/leasing-store.js';
import { HOUR, T0, at, nodeRecord, type OpenFreshStore, useFreshStores } from './fixtures.js';

/** Offers with weekly windows (migration 0015) and many offers in one transaction (issue 17). */
export function offersContract(open: OpenFreshStore): void {
  const fresh = useFreshStores(open);

  async function owned(ids: readonly string[]) {
    const store = await fresh();
    const owners = await store.createProject({ name: 'owners' }, T0);
    await store.syncNodes(ids.map((id) => nodeRecord(id, { owner: 'owners' })), T0);
    const offer = (node_id: string, more: Partial<NewOffer> = {}): NewOffer => ({
      node_id, project_id: owners.id, start: T0, end: null, max_lease_ms: null, min_lease_ms: null, allowed_projects: null, created_by: null, ...more,
    });
    return { store, owners, offer };
  }

  describe('offers', () => {
    it('list every field as the offer was made: terms, price, allowed projects, instants to the millisecond, withdrawal', async () => {
      const { store, offer } = await owned(['n1', 'n2', 'n3']);
      const weekly = parseWeeklySchedule(['mon-fri 18:00-08:00'], 'America/New_York');
      const full = await store.leasing.createOffer(
        offer('n1', {
          start: new Date(T0.getTime() + 123), end: at(48 * HOUR + 7), max_lease_ms: 5 * 86_400_000, min_lease_ms: HOUR, allowed_projects: ['a-lab', "o'brien\\lab"],
          reclaim_notice_ms: 2 * HOUR, price_per_node_hour: '2.5', currency: 'EUR', extension_window_ms: HOUR, extension_max_ahead_ms: 3 * HOUR,
          max_total_ms: 7 * 86_400_000, weekly,
        }),
        [],
        T0,
      );
      const open = await store.leasing.createOffer(offer('n2'), [], at(1));
      const gone = await store.leasing.createOffer(offer('n3'), [], at(2));
      await store.leasing.withdrawOffer(gone.id, [], at(3));
      const listed = (await store.leasing.listOffers({ now: at(4) }, { limit: 10 })).items;
      expect(listed).toEqual([full, open, { ...gone, withdrawn_at: at(3) }]);
      expect(listed.map((o) => o.id)).toEqual((await store.leasing.listOffers({ now: at(4) }, { limit: 2 })).items.map((o) => o.id).concat(gone.id));
    });

    it('keep their weekly windows and timezone, read back the same by every query that returns offers', async () => {
      const { store, offer } = await owned(['n1', 'n2']);
      const weekly = parseWeeklySchedule(['mon-fri 18:00-08:00', 'sat,sun'], 'Europe/Berlin');
      const made = await store.leasing.createOffer(offer('n1', { weekly }), [], T0);
      const plain = await store.leasing.createOffer(offer('n2'), [], T0);
      const expected = { timezone: 'Europe/Berlin', rules: [{ days: [0, 1, 2, 3, 4], start: 1080, end: 480 }, { days: [5, 6], start: 0, end: 1440 }] };
      expect(made.weekly).toEqual(expected);
      expect(plain.weekly).toBeNull();
      expect((await store.leasing.getOffer(made.id))!.weekly).toEqual(expected);
      expect((await store.leasing.offersInForce(['n1'], T0, null))[0]!.weekly).toEqual(expected);
      const listed = await store.leasing.listOffers({ now: T0 }, { limit: 10 });
      expect(listed.items.find((o) => o.id === made.id)!.weekly).toEqual(expected);
      const changes = await store.planningChanges(null);
      expect(changes.offers.find((o) => o.id === made.id)!.weekly).toEqual(expected);
    });

    it('are created many at once with their events, in the order given', async () => {
      const { store, offer } = await owned(['n1', 'n2', 'n3']);
      const made = await store.leasing.createOffers(
        ['n3', 'n1', 'n2'].map((id) => ({ offer: offer(id, { end: at(48 * HOUR) }), events: [{ type: 'offer.created', actor: 'ada', node_id: id }] })),
        T0,
      );
      expect(made.map((o) => o.node_id)).toEqual(['n3', 'n1', 'n2']);
      expect(made.every((o) => o.end?.getTime() === at(48 * HOUR).getTime())).toBe(true);
      const events = await store.leasing.listEvents({ type: 'offer.created' }, { limit: 10 });
      expect(events.items.map((e) => e.offer_id).sort()).toEqual(made.map((o) => o.id).sort());
    });

    it('are all refused when one overlaps an offer in force, naming its node, and none is created', async () => {
      const { store, offer } = await owned(['n1', 'n2', 'n3']);
      await store.leasing.createOffer(offer('n2', { start: at(10 * HOUR), end: at(20 * HOUR) }), [], T0);
      let error: unknown;
      try {
        await store.leasing.createOffers(['n1', 'n2', 'n3'].map((id) => ({ offer: offer(id), events: [{ type: 'offer.created', actor: 'ada', node_id: id }] })), T0);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConflictError);
      expect((error as ConflictError).details).toMatchObject({ node_id: 'n2', constraint: 'offers_no_overlap' });
      const left = await store.leasing.listOffers({ now: T0 }, { limit: 10 });
      expect(left.items.map((o) => o.node_id)).toEqual(['n2']);
      expect((await store.leasing.listEvents({ type: 'offer.created' }, { limit: 10 })).items).toEqual([]);
    });
  });
}
