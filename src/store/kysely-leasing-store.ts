import { sql, type Kysely, type SqlBool } from 'kysely';
import type { BookingDetail } from '../domain/availability.js';
import { NotFoundError } from '../domain/errors.js';
import { idPrefixPattern, isUuid } from '../domain/ids.js';
import type { AuditEvent, Lease, NewAuditEvent, Offer } from '../domain/leasing.js';
import type { Interval } from '../domain/scheduling/interval.js';
import type { Database } from './database.js';
import { guarded as guard } from './db-errors.js';
import { keysetPage } from './keyset-page.js';
import { loadLeases, selectOffers, toEvent, toOffer, type EventRow } from './leasing-rows.js';
import type {
  Booking,
  CurrentLease,
  FreeStarts,
  Hold,
  EventFilter,
  LeaseFilter,
  LeasingStore,
  NewLease,
  NewOffer,
  OfferFilter,
} from './leasing-store.js';
import { LeaseOrder } from './leasing-store.js';
import { availabilityBookings, bookings, type AvailabilityBookingFilter } from './queries/availability-bookings.js';
import { cancelLease, changeLeaseEnd } from './queries/change-lease.js';
import { heldWindows } from './queries/held-windows.js';
import { createLease } from './queries/create-lease.js';
import { freeStarts } from './queries/free-starts.js';
import { planningHolds } from './queries/planning-holds.js';
import { foldedRows } from './folded-rows.js';
import { insertEvents } from './queries/insert-events.js';
import { insertOffers } from './queries/insert-offers.js';
import { handedOver, notSubleasedAt } from './queries/node-view-query.js';
import { inList, tstzRange } from './queries/ranges.js';
import type { Page, PageRequest } from './page.js';


/** Offers, leases and the audit log on Kysely (PGlite and PostgreSQL alike). */
/** The offer row's instants (folded-rows.ts). */
const OFFER_DATES = ['created_at', 'withdrawn_at', 'start', 'end'] as const;

export class KyselyLeasingStore implements LeasingStore {
  constructor(
    private readonly db: Kysely<Database>,
    /** Wide reads come back folded into one JSON text (PGlite, whose result parser costs per field: planning-holds.ts). */
    private readonly foldRows = false,
  ) {}

  async createOffer(offer: NewOffer, events: readonly NewAuditEvent[], now: Date): Promise<Offer> {
    return (await this.createOffers([{ offer, events }], now))[0]!;
  }

  createOffers(offers: readonly { readonly offer: NewOffer; readonly events: readonly NewAuditEvent[] }[], now: Date): Promise<readonly Offer[]> {
    return guard(() => this.db.transaction().execute((trx) => insertOffers(trx, offers, now)));
  }

  getOffer(id: string): Promise<Offer | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return guard(async () => {
      const row = await selectOffers(this.db).where('o.id', '=', id).executeTakeFirst();
      return row ? toOffer(row) : null;
    });
  }

  listOffers(filter: OfferFilter, page: PageRequest): Promise<Page<Offer>> {
    return guard(async () => {
      let query = selectOffers(this.db);
      if (filter.node_id !== undefined) query = query.where('o.node_id', '=', filter.node_id);
      if (filter.node_ids !== undefined) {
        if (filter.node_ids.length === 0) return { items: [], nextMarker: null };
        query = query.where(inList('o.node_id', filter.node_ids));
      }
      if (filter.project_id !== undefined) query = query.where('o.project_id', '=', filter.project_id);
      if (filter.id_prefix !== undefined) query = query.where(sql<SqlBool>`o.id::text like ${idPrefixPattern(filter.id_prefix)}`);
      if (filter.visible_to !== undefined) {
        const p = filter.visible_to;
        query = query.where(sql<SqlBool>`(o.project_id = ${p} or o.allowed_projects is null or ${p} = any(o.allowed_projects))`);
      }
      if (filter.overlapping !== undefined) {
        query = query
          .where('o.withdrawn_at', 'is', null)
          .where(sql<SqlBool>`o.period && ${tstzRange(filter.overlapping.from, filter.overlapping.to)}`);
      }
      const now = sql`${filter.now}::timestamptz`;
      switch (filter.status) {
        case 'withdrawn':
          query = query.where('o.withdrawn_at', 'is not', null);
          break;
        case 'expired':
          query = query.where('o.withdrawn_at', 'is', null).where(sql<SqlBool>`upper(o.period) <= ${now}`);
          break;
        case 'scheduled':
          query = query.where('o.withdrawn_at', 'is', null).where(sql<SqlBool>`lower(o.period) > ${now}`);
          break;
        case 'active':
          query = query.where('o.withdrawn_at', 'is', null).where(sql<SqlBool>`o.period @> ${now}`);
          break;
        default:
          break;
      }
      // Folded into one JSON text on PGlite (folded-rows.ts): 22 fields a row.
      const run = this.foldRows ? (ordered: typeof query) => foldedRows(this.db, ordered, sql`p.created_at, p.id`, OFFER_DATES) : undefined;
      const result = await keysetPage(query, { id: sql`o.id`, sortKey: [sql`o.created_at`, sql`o.id`], idOf: (r) => r.id }, page, undefined, run);
      return { items: result.items.map(toOffer), nextMarker: result.nextMarker };
    });
  }

  withdrawOffer(id: string, events: readonly NewAuditEvent[], now: Date): Promise<Offer> {
    return guard(() =>
      this.db.transaction().execute(async (trx) => {
        const row = await trx
          .updateTable('offers')
          .set((eb) => ({ withdrawn_at: eb.fn.coalesce('withdrawn_at', sql<Date>`${now}::timestamptz`) }))
          .where('id', '=', id)
          .returning('id')
          .executeTakeFirst();
        if (!row) throw new NotFoundError('offer', id);
        await insertEvents(trx, events.map((e) => ({ ...e, offer_id: id })), now);
        return toOffer(await selectOffers(trx).where('o.id', '=', id).executeTakeFirstOrThrow());
      }),
    );
  }

  offersInForce(nodeIds: readonly string[] | null, from: Date, to: Date | null): Promise<readonly Offer[]> {
    if (nodeIds !== null && nodeIds.length === 0) return Promise.resolve([]);
    return guard(async () => {
      let query = selectOffers(this.db)
        .where('o.withdrawn_at', 'is', null)
        .where(sql<SqlBool>`o.period && ${tstzRange(from, to)}`);
      if (nodeIds !== null) query = query.where('o.node_id', 'in', nodeIds);
      return (await query.orderBy('o.node_id').orderBy(sql`lower(o.period)`).execute()).map(toOffer);
    });
  }

  bookings(nodeIds: readonly string[] | null, from: Date, to: Date | null): Promise<readonly Booking[]> {
    return guard(() => bookings(this.db, { nodeIds, from, to }));
  }

  holds(nodeIds: readonly string[], from: Date, to: Date | null): Promise<readonly Hold[]> {
    return guard(() => planningHolds(this.db, nodeIds, from, to, this.foldRows));
  }

  freeStarts(nodeIds: readonly string[], from: Date, to: Date, spanMs: number): Promise<readonly FreeStarts[]> {
    return guard(() => freeStarts(this.db, nodeIds, from, to, spanMs));
  }

  availabilityBookings(filter: AvailabilityBookingFilter): Promise<readonly BookingDetail[]> {
    return guard(() => availabilityBookings(this.db, filter));
  }

  createLease(lease: NewLease, events: readonly NewAuditEvent[], now: Date): Promise<Lease> {
    return guard(() => createLease(this.db, lease, events, now));
  }

  getLease(id: string): Promise<Lease | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return guard(async () => {
      const row = await this.db.selectFrom('leases').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? (await loadLeases(this.db, [row]))[0]! : null;
    });
  }

  listLeases(filter: LeaseFilter, page: PageRequest, order: LeaseOrder = LeaseOrder.Start): Promise<Page<Lease>> {
    return guard(async () => {
      let query = this.db.selectFrom('leases as l').selectAll('l');
      if (filter.project_id !== undefined) query = query.where('l.project_id', '=', filter.project_id);
      if (filter.name !== undefined) query = query.where('l.name', '=', filter.name);
      if (filter.id_prefix !== undefined) query = query.where(sql<SqlBool>`l.id::text like ${idPrefixPattern(filter.id_prefix)}`);
      if (filter.state !== undefined) query = query.where('l.state', '=', filter.state);
      if (filter.node_id !== undefined) {
        const node = filter.node_id;
        query = query.where(sql<SqlBool>`exists (select 1 from allocations a where a.lease_id = l.id and a.node_id = ${node})`);
      }
      if (filter.owner !== undefined) {
        const { project_id, project_name } = filter.owner;
        query = query.where(sql<SqlBool>`exists (
          select 1 from allocations a join nodes n on n.id = a.node_id
          where a.lease_id = l.id and n.owner in (${project_id}, ${project_name}))`);
      }
      if (filter.visible_to !== undefined) {
        const { project_id, project_name } = filter.visible_to;
        query = query.where(sql<SqlBool>`(l.project_id = ${project_id} or exists (
          select 1 from allocations a join nodes n on n.id = a.node_id
          where a.lease_id = l.id and n.owner in (${project_id}, ${project_name})))`);
      }
      const spec =
        order === LeaseOrder.Newest
          ? { id: sql`l.id`, sortKey: [sql`l.created_at`, sql`l.id`], idOf: (r: { id: string }) => r.id, descending: true }
          : { id: sql`l.id`, sortKey: [sql`l.start_at`, sql`l.id`], idOf: (r: { id: string }) => r.id };
      const result = await keysetPage(query, spec, page);
      return { items: await loadLeases(this.db, result.items), nextMarker: result.nextMarker };
    });
  }

  changeLeaseEnd(id: string, end: Date, cleaningGapMs: number, events: readonly NewAuditEvent[], now: Date, maxNodes: number | null = null, maxNodeHours: number | null = null, expectEnd: Date | null = null): Promise<Lease> {
    if (!isUuid(id)) return Promise.reject(new NotFoundError('lease', id));
    return guard(() => changeLeaseEnd(this.db, id, end, cleaningGapMs, events, now, maxNodes, maxNodeHours, expectEnd));
  }

  offeredNodeIds(projectId: string, now: Date): Promise<readonly string[]> {
    return guard(async () => {
      const rows = await this.db
        .selectFrom('offers as o')
        .select('o.node_id')
        .distinct()
        .where('o.withdrawn_at', 'is', null)
        .where(sql<SqlBool>`(upper(o.period) is null or upper(o.period) > ${now}::timestamptz)`)
        .where(sql<SqlBool>`(o.allowed_projects is null or ${projectId} = any(o.allowed_projects))`)
        .execute();
      return rows.map((r) => r.node_id);
    });
  }

  heldWindows(projectId: string, from: Date, to: Date, exceptLeaseId?: string): Promise<readonly Interval[]> {
    if (exceptLeaseId !== undefined && !isUuid(exceptLeaseId)) return Promise.resolve([]);
    return guard(() => heldWindows(this.db, projectId, from, to, exceptLeaseId));
  }

  cancelLease(id: string, events: readonly NewAuditEvent[], now: Date): Promise<Lease> {
    if (!isUuid(id)) return Promise.reject(new NotFoundError('lease', id));
    return guard(() => cancelLease(this.db, id, events, now));
  }

  currentLeases(nodeIds: readonly string[], now: Date): Promise<ReadonlyMap<string, CurrentLease>> {
    if (nodeIds.length === 0) return Promise.resolve(new Map());
    return guard(async () => {
      const rows = await this.db
        .selectFrom('allocations as a')
        .innerJoin('leases as l', 'l.id', 'a.lease_id')
        .select(['a.node_id', 'l.id as lease_id', 'l.project_id', 'l.end_at as end'])
        .where(inList('a.node_id', nodeIds))
        .where('a.holds', '=', true)
        .where(sql<SqlBool>`a.period @> ${now}::timestamptz`)
        .where('l.state', 'not in', ['cancelled', 'failed'])
        .where(sql<SqlBool>`${handedOver}`)
        .where(sql<SqlBool>`${notSubleasedAt(now)}`)
        .execute();
      return new Map(rows.map((r) => [r.node_id, { lease_id: r.lease_id, project_id: r.project_id, end: r.end }]));
    });
  }

  leasedNodeIds(projectId: string, now: Date): Promise<readonly string[]> {
    return guard(async () => {
      const rows = await this.db
        .selectFrom('allocations as a')
        .innerJoin('leases as l', 'l.id', 'a.lease_id')
        .select('a.node_id')
        .where('l.project_id', '=', projectId)
        .where('a.holds', '=', true)
        .where(sql<SqlBool>`a.period @> ${now}::timestamptz`)
        .where('l.state', 'not in', ['cancelled', 'failed'])
        .where(sql<SqlBool>`${handedOver}`)
        .where(sql<SqlBool>`${notSubleasedAt(now)}`)
        .execute();
      return rows.map((r) => r.node_id);
    });
  }

  clearQuarantine(nodeId: string, events: readonly NewAuditEvent[], now: Date): Promise<void> {
    return guard(() =>
      this.db.transaction().execute(async (trx) => {
        await trx.updateTable('nodes').set({ quarantined_at: null, quarantine_reason: null }).where('id', '=', nodeId).execute();
        // The next lessee's access begins now (usage accounting: the quarantined allocation held the node back).
        await trx.updateTable('allocations').set({ freed_at: now }).where('node_id', '=', nodeId).where('state', '=', 'quarantined').where('freed_at', 'is', null).execute();
        await insertEvents(trx, events, now);
      }),
    );
  }

  appendEvents(events: readonly NewAuditEvent[], now: Date): Promise<void> {
    return guard(() => insertEvents(this.db, events, now));
  }

  /** Newest first; the marker is the last seen `seq` (keyset, descending). */
  listEvents(filter: EventFilter, page: PageRequest): Promise<Page<AuditEvent>> {
    if (filter.lease_id !== undefined && !isUuid(filter.lease_id)) return Promise.resolve({ items: [], nextMarker: null });
    return guard(async () => {
      let query = this.db.selectFrom('events as e').selectAll('e');
      if (filter.node_id !== undefined) query = query.where('e.node_id', '=', filter.node_id);
      if (filter.lease_id !== undefined) query = query.where('e.lease_id', '=', filter.lease_id);
      if (filter.project_id !== undefined) {
        const p = filter.project_id;
        query = query.where((eb) => eb.or([eb('e.project_id', '=', p), eb('e.owner_project_id', '=', p)]));
      }
      if (filter.type !== undefined) {
        // "lease" matches lease.created, lease.ended, ...; "lease.created" matches itself.
        // `lease` means lease.* too; the caller's text is matched as text (a `%` or `_` in it is not a wildcard).
        const prefix = `${filter.type.replace(/[\\%_]/g, (c) => `\\${c}`)}.%`;
        query = query.where((eb) => eb.or([eb('e.type', '=', filter.type!), eb('e.type', 'like', prefix)]));
      }
      if (filter.since !== undefined) query = query.where('e.at', '>=', filter.since);
      if (filter.until !== undefined) query = query.where('e.at', '<', filter.until);
      if (filter.visible_to !== undefined) {
        const p = filter.visible_to;
        query = query.where((eb) => eb.or([eb('e.project_id', '=', p), eb('e.owner_project_id', '=', p)]));
      }
      if (page.marker != null) {
        if (!/^\d+$/.test(page.marker)) throw new NotFoundError('event', page.marker);
        query = query.where(sql<SqlBool>`e.seq < ${page.marker}::bigint`);
      }
      const rows = (await query.orderBy('e.seq', 'desc').limit(page.limit + 1).execute()) as unknown as EventRow[];
      const items = rows.slice(0, page.limit).map(toEvent);
      return { items, nextMarker: rows.length > page.limit ? items[items.length - 1]!.seq : null };
    });
  }
}
