import { offerIntervals } from '../../domain/scheduling/offer-windows.js';
import { describeWeekly } from '../../domain/scheduling/weekly-windows.js';
import { createRoute, z } from '@hono/zod-openapi';
import {
  MAX_AVAILABILITY_WINDOW_MS,
  busyIntervals,
  freeWindows,
  offerWindows,
  timelineNodes,
  type AvailabilityViewer,
} from '../../domain/availability.js';
import { formatDuration } from '../../domain/duration.js';
import { InvalidRequestError } from '../../domain/errors.js';
import { isAcceptedInstant } from '../../domain/time-bounds.js';
import type { NodeView } from '../../domain/inventory.js';
import { isAdmin } from '../../domain/policy.js';
import { createRouter, type ApiDeps } from '../context.js';
import { nodeMatcher, nodesKnownTo } from '../../access/node-access.js';
import { NextLink, PageQuery } from '../pagination.js';
import { ExpressionInput, TimeInput, errorResponses, jsonResponse } from '../schemas.js';

const DAY = 86_400_000;
const DEFAULT_WINDOW_MS = 7 * DAY;
const Time = TimeInput;
const Timestamp = z.string().openapi({ format: 'date-time', example: '2030-01-01T00:00:00.000Z' });

const BusySchema = z
  .object({
    start: Timestamp,
    end: Timestamp,
    kind: z.enum(['lease', 'cleaning']).openapi({ description: 'The lease itself, or the cleaning after it.' }),
    lease: z
      .object({
        id: z.string(),
        name: z.string(),
        state: z.string(),
        project: z.object({ id: z.string(), name: z.string() }).openapi({ description: 'The lessee.' }),
      })
      .optional()
      .openapi({
        description:
          "Only when the caller may know whose lease it is: its own project's, any lease on a node its project owns, " +
          "and every lease for the operator. Other projects' leases are plain busy time (touching ones merged).",
      }),
  })
  .openapi('BusyInterval');

const AvailabilityNodeSchema = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    resource_class: z.string().nullable(),
    owned: z.boolean().openapi({ description: "The caller's project owns the node: it may lease it without an offer." }),
    owner_project: z
      .object({ id: z.string(), name: z.string() })
      .nullable()
      .openapi({ description: 'The owning project, for the operator and the owner itself; null for anyone else.' }),
    unavailable: z
      .string()
      .nullable()
      .openapi({ description: 'Why no new lease can start on it now ("in maintenance", "quarantined ..."), or null.' }),
    offers: z
      .array(
        z.object({
          id: z.string(),
          start: Timestamp,
          end: Timestamp.nullable().openapi({ description: 'null: open-ended.' }),
          max_lease_duration: z.string().nullable(),
          min_lease_duration: z.string().nullable(),
          weekly_summary: z.string().nullable().openapi({ description: "The offer's recurring weekly windows in words; null: none." }),
          windows: z
            .array(z.object({ start: Timestamp, end: Timestamp }))
            .nullable()
            .openapi({ description: 'With weekly windows: where the offer makes the node available within [from, to); null: all of start to end.' }),
        }),
      )
      .openapi({ description: 'Offers in force overlapping the window that the caller may lease from (or owns), by start.' }),
    busy: z.array(BusySchema).openapi({ description: 'Busy time overlapping the window, by start; not clipped to it.' }),
    free: z
      .array(z.object({ start: Timestamp, end: Timestamp }))
      .openapi({
        description:
          'Where a new lease could run within the window, from now on: inside an offer open to the caller (anywhere on ' +
          'its own nodes), leaving each booking its cleaning gap. The offer\'s length limits still apply.',
      }),
  })
  .openapi('AvailabilityNode');

const AvailabilitySchema = z
  .object({
    from: Timestamp,
    to: Timestamp,
    now: Timestamp.openapi({ description: "The server's clock, for the timeline's now line." }),
    cleaning_gap: z.string().openapi({ description: 'The time kept free after every lease for cleaning (ISO 8601).', example: 'PT10M' }),
    nodes: z.array(AvailabilityNodeSchema),
    next: NextLink,
  })
  .openapi('Availability');

const getAvailability = createRoute({
  method: 'get',
  path: '/v1/availability',
  tags: ['offers'],
  summary: 'The availability timeline: per node, offer windows, busy time and free windows over [from, to)',
  description:
    'Rows: every node for the operator; for a project, the nodes it owns, those offered to it in the window and those ' +
    'it leases in the window, sorted by name. At most 93 days per request. A lessee sees another project\'s lease ' +
    'only as busy time; the owner of a node sees who leases it.',
  request: {
    query: z.object({
      ...PageQuery,
      from: Time.optional().openapi({ description: 'Start of the window (RFC 3339). Default: now.' }),
      to: Time.optional().openapi({ description: 'End of the window, after from, at most 93 days later. Default: from + 7 days.' }),
      where: ExpressionInput.optional().openapi({ description: 'Requirement expression the nodes must match (as GET /v1/offers?where=).', example: 'gpus >= 1' }),
    }),
  },
  responses: { 200: jsonResponse(AvailabilitySchema, 'A page of nodes with their availability'), ...errorResponses(400, 401) },
});

const iso = (ms: number): string => new Date(ms).toISOString();

function unavailable(node: NodeView): string | null {
  if (node.quarantined_at) return 'quarantined after a failed cleaning';
  if (node.maintenance) return 'in maintenance';
  return null;
}

export function availabilityRoutes(deps: ApiDeps) {
  const router = createRouter();

  router.openapi(getAvailability, async (c) => {
    const principal = c.get('principal');
    const q = c.req.valid('query');
    const now = deps.clock.now().getTime();
    const from = q.from === undefined ? now : Date.parse(q.from);
    const to = q.to === undefined ? from + DEFAULT_WINDOW_MS : Date.parse(q.to);
    if (to <= from) throw new InvalidRequestError('to must be after from', { details: { field: 'to' } });
    if (!isAcceptedInstant(to)) {
      // from=9999-12-31 and the default week would end in year 10000, which no timestamp column can be asked about.
      throw new InvalidRequestError(`the window from ${iso(from)} ends after 9999-12-31; give an earlier from or a to`, {
        details: { field: q.to === undefined ? 'from' : 'to' },
      });
    }
    if (to - from > MAX_AVAILABILITY_WINDOW_MS) {
      throw new InvalidRequestError(`the window from ${iso(from)} to ${iso(to)} is longer than 93 days; ask for less`, {
        details: { field: 'to', max_window: formatDuration(MAX_AVAILABILITY_WINDOW_MS) },
      });
    }
    const viewer: AvailabilityViewer = { isAdmin: isAdmin(principal), projectId: principal.projectId };

    const nodes = await deps.store.allNodes();
    let matches: ((n: NodeView) => boolean) | null = null;
    if (q.where !== undefined) matches = nodeMatcher(q.where, isAdmin(principal) ? nodes : await nodesKnownTo(deps, principal));

    const window = { from: new Date(from), to: new Date(to) };
    const [offers, own] = await Promise.all([
      deps.store.leasing.offersInForce(null, window.from, window.to),
      viewer.isAdmin || viewer.projectId === null
        ? Promise.resolve([])
        : deps.store.leasing.availabilityBookings({ ...window, projectId: viewer.projectId }),
    ]);
    const visible = timelineNodes(viewer, nodes, offers, new Set(own.map((b) => b.node_id)));

    let startAt = 0;
    if (q.marker !== undefined) {
      const marker = visible.find((n) => n.id === q.marker);
      if (!marker) throw new InvalidRequestError(`marker ${JSON.stringify(q.marker)} names no item of this list`, { details: { field: 'marker' } });
      startAt = visible.indexOf(marker) + 1;
    }
    const rows: NodeView[] = [];
    let more = false;
    for (let i = startAt; i < visible.length; i++) {
      const node = visible[i]!;
      if (matches && !matches(node)) continue;
      if (rows.length === q.limit) {
        more = true;
        break;
      }
      rows.push(node);
    }

    // The cleaning gap of a booking just after the window still shortens the last free window in it.
    const bookings = await deps.store.leasing.availabilityBookings({
      from: window.from,
      to: new Date(to + deps.leasing.cleaningGapMs),
      nodeIds: rows.map((n) => n.id),
    });
    const bookingsByNode = group(bookings, (b) => b.node_id);
    const offersByNode = group(offers, (o) => o.node_id);

    const out = rows.map((node) => {
      const nodeOffers = offerWindows(viewer, offersByNode.get(node.id) ?? []);
      const busy = busyIntervals(viewer, node, bookingsByNode.get(node.id) ?? [], now);
      const free = freeWindows(viewer, node, nodeOffers, busy, { start: from, end: to }, now, deps.leasing.cleaningGapMs);
      const owned = viewer.projectId !== null && node.owner_project?.id === viewer.projectId;
      return {
        id: node.id,
        name: node.name,
        resource_class: node.resource_class,
        owned,
        owner_project: viewer.isAdmin || owned ? node.owner_project : null,
        unavailable: unavailable(node),
        offers: nodeOffers.map((o) => ({
          id: o.id,
          start: o.start.toISOString(),
          end: o.end ? o.end.toISOString() : null,
          max_lease_duration: o.max_lease_ms === null ? null : formatDuration(o.max_lease_ms),
          min_lease_duration: o.min_lease_ms === null ? null : formatDuration(o.min_lease_ms),
          weekly_summary: o.weekly ? describeWeekly(o.weekly) : null,
          windows: o.weekly ? offerIntervals(o, { start: from, end: to }).map((w) => ({ start: iso(w.start), end: iso(w.end) })) : null,
        })),
        busy: busy
          .filter((b) => b.start < to && b.end > from)
          .map((b) => ({ start: iso(b.start), end: iso(b.end), kind: b.kind, ...(b.lease ? { lease: b.lease } : {}) })),
        free: free.map((f) => ({ start: iso(f.start), end: iso(f.end) })),
      };
    });

    let next: string | null = null;
    if (more) {
      const url = new URL(c.req.url);
      // The window as resolved, so the next page describes the same window even when from defaulted to now.
      url.searchParams.set('from', iso(from));
      url.searchParams.set('to', iso(to));
      url.searchParams.set('marker', rows[rows.length - 1]!.id);
      next = `${url.pathname}?${url.searchParams.toString()}`;
    }
    return c.json({ from: iso(from), to: iso(to), now: iso(now), cleaning_gap: formatDuration(deps.leasing.cleaningGapMs), nodes: out, next }, 200);
  });

  return router;
}

function group<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const list = out.get(key(item));
    if (list) list.push(item);
    else out.set(key(item), [item]);
  }
  return out;
}
