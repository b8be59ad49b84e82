import { createRoute, z } from '@hono/zod-openapi';
import { NIL_UUID } from '../../domain/ids.js';
import { mayUseOffer } from '../../domain/availability.js';
import { parseDuration } from '../../domain/duration.js';
import { ConflictError, ForbiddenError, InvalidRequestError, NotFoundError, PolicyViolationError } from '../../domain/errors.js';
import { SUBLEASE_RULE, SubleaseRule, parentFor, subOfferWindow, subleaseRefusal, subleaseSubject } from '../../domain/subleasing.js';
import { checkIdOrName } from '../../domain/text-bounds.js';
import { type Principal, localUserId } from '../../domain/identity.js';
import type { Offer } from '../../domain/leasing.js';
import { canManageOwnedNode, isAdmin } from '../../domain/policy.js';
import { subtract, type Interval } from '../../domain/scheduling/interval.js';
import { checkWithinHorizon } from '../../domain/time-bounds.js';
import type { OfferStatus } from '../../store/leasing-store.js';
import { createRouter, type ApiDeps } from '../context.js';
import { nodeForCaller, nodesMatching } from '../../access/node-access.js';
import { NextLink, PageQuery, nextLink } from '../pagination.js';
import { DurationInput, ExpressionInput, IdOrName, IdParam, IdPrefix, TimeInput, errorResponses, jsonBody, jsonResponse } from '../schemas.js';
import { projectNamesOf } from '../project-names.js';
import { offerJson } from '../serializers.js';
import { ExtensionPolicyFields, ExtensionPolicyOut, parseExtensionPolicy } from '../extension-schemas.js';

const Time = TimeInput;
const Duration = DurationInput;
/** An offer's window is a booking: within 10 years of now. */
const WindowTime = TimeInput.openapi({ description: 'RFC 3339, within 10 years of now.' });
const STATUSES = ['scheduled', 'active', 'expired', 'withdrawn'] as const;
/** Each is looked up one by one; a list longer than the projects of a large installation is a mistake. */
const MAX_ALLOWED_PROJECTS = 1000;

export const OfferSchema = z
  .object({
    id: z.string(),
    node_id: z.string(),
    node_name: z.string().nullable(),
    project_id: z.string(),
    project_name: z.string().nullable().openapi({ description: 'The offering project\'s name (null when it has no row).' }),
    start: z.string(),
    end: z.string().nullable(),
    max_lease_duration: z.string().nullable(),
    min_lease_duration: z.string().nullable(),
    reclaim_notice: z.string().nullable().openapi({ description: 'The owner may take the node back from a lease with this much notice (POST /v1/nodes/{id}/reclaim); null: never before the lease ends.' }),
    ...ExtensionPolicyOut,
    allowed_projects: z.array(z.string()).nullable(),
    allowed_project_names: z.array(z.string().nullable()).nullable().openapi({
      description: 'The names of allowed_projects, in the same order (null for an id with no project row); null with it.',
    }),
    price_per_node_hour: z.string().nullable().openapi({ description: 'Price per node-hour in `currency`; usage reports charges from it. Null: no price.', example: '2.5' }),
    currency: z.string().nullable().openapi({ description: 'ISO 4217 code of the price, e.g. EUR.', example: 'EUR' }),
    sublease_of: z.string().nullable().openapi({
      description: "A sub-offer: the lease its lessee offers the node from (project_id is that lessee); it ends with that lease's hold on the node. Null: the owner's offer.",
    }),
    status: z.enum(STATUSES),
    free_windows: z.array(z.object({ start: z.string(), end: z.string().nullable() })),
    created_at: z.string(),
    withdrawn_at: z.string().nullable(),
  })
  .openapi('Offer');

/** A decimal with at most 4 places (numeric(14, 4)), as a string so nothing is lost to binary floating point. */
const PriceInput = z
  .string()
  .regex(/^\d{1,10}(\.\d{1,4})?$/, 'a decimal number with at most 4 decimals, e.g. "2.50"')
  .openapi({ description: 'Price per node-hour (a decimal string, at most 4 decimals); needs `currency`.', example: '2.50' });
const CurrencyInput = z
  .string()
  .regex(/^[A-Z]{3}$/, 'an ISO 4217 code: three capital letters, e.g. EUR')
  .openapi({ description: 'ISO 4217 currency code of `price_per_node_hour`.', example: 'EUR' });
type OfferBody = { start?: string; end?: string; max_lease_duration?: string; min_lease_duration?: string; reclaim_notice?: string; allowed_projects?: string[] };

const createOffer = createRoute({
  method: 'post',
  path: '/v1/offers',
  tags: ['offers'],
  summary: 'Put a node in the pool under a policy (its owner, or the operator), or sub-lease a node you hold (its lessee)',
  description:
    'A member of a project that holds the node through a lease (active or to come) offers it to other projects within that lease\'s ' +
    'window on the node (a sub-offer, `sublease_of`): `start` defaults to now (or the lease\'s start), `end` to the lease\'s end on the ' +
    'node. A sub-offer outside that window is refused (409 policy_violation, rule `sublease_within_lease`); a node held through a ' +
    'sub-lease cannot be offered on (409, rule `sublease_one_level`; policy rule `baremetal:node:sublease`). While a sub-lease runs, ' +
    'its lessee has the node and the offering lessee has no access; whatever ends the offering lease\'s hold on the node ends the ' +
    'sub-lease at the same instant.',
  request: {
    body: jsonBody(
      z
        .object({
          node_id: IdOrName.openapi({ description: 'Node uuid or name.' }),
          start: WindowTime.optional().openapi({ description: 'Default: now. Within 10 years of now.' }),
          end: WindowTime.optional().openapi({ description: 'Default: open-ended. Within 10 years of now.' }),
          max_lease_duration: Duration.optional(),
          min_lease_duration: Duration.optional(),
          reclaim_notice: Duration.optional().openapi({
            description:
              'Lets the owner take the node back from a lease booked under this offer with this much notice ("P1D"): the lease gets a ' +
              'substitute where one is free, or the node leaves it. Without it, a lease keeps the node to its end.',
          }),
          price_per_node_hour: PriceInput.optional(),
          currency: CurrencyInput.optional(),
          ...ExtensionPolicyFields,
          allowed_projects: z
            .array(IdOrName)
            .max(MAX_ALLOWED_PROJECTS)
            .optional()
            .openapi({ description: `Project ids or names (at most ${MAX_ALLOWED_PROJECTS}); default: every project.` }),
        })
        .strict(),
    ),
  },
  responses: { 201: jsonResponse(OfferSchema, 'The offer'), ...errorResponses(400, 401, 403, 404, 409) },
});

const listOffers = createRoute({
  method: 'get',
  path: '/v1/offers',
  tags: ['offers'],
  summary: 'List offers: your own, and those you may lease from',
  request: {
    query: z.object({
      ...PageQuery,
      node_id: IdOrName.optional(),
      owner: IdOrName.optional().openapi({ description: 'Offering project id or name.' }),
      status: z.enum(STATUSES).optional(),
      id_prefix: IdPrefix.optional(),
      where: ExpressionInput.optional().openapi({ description: 'Requirement expression the node must match.' }),
      from: Time.optional().openapi({ description: 'With to: offers in force overlapping [from, to).' }),
      to: Time.optional(),
      free_from: Time.optional(),
      free_to: Time.optional().openapi({ description: 'With free_from: only offers free for the whole of [free_from, free_to).' }),
    }),
  },
  responses: { 200: jsonResponse(z.object({ offers: z.array(OfferSchema), next: NextLink }), 'A page of offers'), ...errorResponses(400, 401) },
});

const getOffer = createRoute({
  method: 'get',
  path: '/v1/offers/{id}',
  tags: ['offers'],
  summary: 'Show an offer with its free windows',
  request: { params: IdParam },
  responses: { 200: jsonResponse(OfferSchema, 'The offer'), ...errorResponses(401, 404) },
});

const deleteOffer = createRoute({
  method: 'delete',
  path: '/v1/offers/{id}',
  tags: ['offers'],
  summary: 'Withdraw an offer: existing leases stay, no new ones',
  description:
    'No new lease is booked from the offer. A lease already made keeps the node, except that an upcoming lease with `replace: auto` ' +
    'that no other offer of the node still covers moves to an equivalent free node (`lease.node_replaced`); without one it keeps the ' +
    'node as booked (`lease.offer_withdrawn`).',
  request: { params: IdParam },
  responses: { 204: { description: 'Withdrawn' }, ...errorResponses(401, 403, 404) },
});

export function offerStatus(o: Offer, now: Date): OfferStatus {
  if (o.withdrawn_at) return 'withdrawn';
  if (o.end && o.end.getTime() <= now.getTime()) return 'expired';
  if (o.start.getTime() > now.getTime()) return 'scheduled';
  return 'active';
}

export function offerRoutes(deps: ApiDeps) {
  const router = createRouter();
  const canSee = (p: Principal, o: Offer) => mayUseOffer({ isAdmin: isAdmin(p), projectId: p.projectId }, o);

  /** Offers as JSON with their status and free windows (from now on, minus bookings and cleaning gaps). */
  async function render(offers: readonly Offer[]) {
    const now = deps.clock.now();
    const nodeIds = [...new Set(offers.map((o) => o.node_id))];
    const [bookings, names, projects] = await Promise.all([
      deps.store.leasing.bookings(nodeIds, now, null),
      deps.store.nodeNames(nodeIds),
      projectNamesOf(deps.store, offers.flatMap((o) => [o.project_id, ...(o.allowed_projects ?? [])])),
    ]);
    // By node once, not filtered per offer (a page of 1,000 offers scanned every booking 1,000 times).
    const busyByNode = new Map<string, Interval[]>();
    // Keyed by level too: a sub-offer is free where no other sub-lease is (its parent's booking is what it is carved from).
    for (const b of bookings) {
      const key = `${b.node_id}:${b.sub === true}`;
      const list = busyByNode.get(key) ?? [];
      list.push({ start: b.start.getTime(), end: b.blocked_until.getTime() });
      busyByNode.set(key, list);
    }
    return offers.map((o) => {
      const from = Math.max(o.start.getTime(), now.getTime());
      const window: Interval = { start: from, end: o.end ? o.end.getTime() : Infinity };
      const busy = busyByNode.get(`${o.node_id}:${o.parent_allocation_id !== null}`) ?? [];
      const free = o.withdrawn_at || window.end <= window.start ? [] : subtract([window], busy);
      return offerJson(o, { node_name: names.get(o.node_id) ?? null, status: offerStatus(o, now), free_windows: free, project_names: projects });
    });
  }

  async function projectIds(keys: readonly string[], field: string): Promise<string[]> {
    const ids: string[] = [];
    for (const key of keys) {
      const project = await deps.store.findProject(key);
      if (!project) throw new InvalidRequestError(`${field}: no project has the id or name ${JSON.stringify(key)}`, { details: { field } });
      ids.push(project.id);
    }
    return [...new Set(ids)];
  }

  router.openapi(createOffer, async (c) => {
    const principal = c.get('principal');
    const body = c.req.valid('json');
    const now = deps.clock.now();
    const sub = await subOfferFor(principal, body.node_id, body, now);
    if (sub) return c.json((await render([sub]))[0]!, 201);
    const { node, access } = await nodeForCaller(deps, principal, body.node_id);
    if (!canManageOwnedNode(principal, access)) throw new ForbiddenError("only the node's owner (a member) or an operator can offer it");
    if (!node.owner_project) {
      throw new ConflictError(`node ${node.name ?? node.id} has no owner project; the operator sets one first`, { details: { node_id: node.id } });
    }
    const start = body.start ? new Date(body.start) : now;
    const end = body.end ? new Date(body.end) : null;
    checkWithinHorizon(start, now, 'start');
    if (end) checkWithinHorizon(end, now, 'end');
    if (end && end.getTime() <= Math.max(start.getTime(), now.getTime())) {
      throw new InvalidRequestError('end must be after start and in the future', { details: { field: 'end' } });
    }
    const max = body.max_lease_duration === undefined ? null : parseDuration(body.max_lease_duration, 'max_lease_duration');
    const min = body.min_lease_duration === undefined ? null : parseDuration(body.min_lease_duration, 'min_lease_duration');
    if (max !== null && max <= 0) throw new InvalidRequestError('max_lease_duration must be longer than zero', { details: { field: 'max_lease_duration' } });
    if (max !== null && min !== null && min > max) {
      throw new InvalidRequestError('min_lease_duration is longer than max_lease_duration', { details: { field: 'min_lease_duration' } });
    }
    const reclaim = body.reclaim_notice === undefined ? null : parseDuration(body.reclaim_notice, 'reclaim_notice');
    if ((body.price_per_node_hour === undefined) !== (body.currency === undefined)) {
      const field = body.currency === undefined ? 'currency' : 'price_per_node_hour';
      throw new InvalidRequestError('price_per_node_hour and currency go together', { details: { field } });
    }
    const extension = parseExtensionPolicy(body, max);
    const allowed = body.allowed_projects === undefined ? null : await projectIds(body.allowed_projects, 'allowed_projects');
    const offer = await deps.store.leasing.createOffer(
      { node_id: node.id, project_id: node.owner_project.id, start, end, max_lease_ms: max, min_lease_ms: min, allowed_projects: allowed, created_by: localUserId(principal), reclaim_notice_ms: reclaim, price_per_node_hour: body.price_per_node_hour ?? null, currency: body.currency ?? null, ...extension },
      [{ type: 'offer.created', actor: principal.userName, actor_user_id: localUserId(principal), node_id: node.id, owner_project_id: node.owner_project.id, message: `${node.name ?? node.id} offered` }],
      now,
    );
    c.get('log').info({ offer: offer.id, node: node.id }, 'offer created');
    return c.json((await render([offer]))[0]!, 201);
  });

  /**
   * A sub-offer, when the caller's project (not the node's owner) holds the node through a lease, active or to
   * come: carved from that allocation, inside its window (domain/subleasing.ts). Null: not a lessee's offer — the
   * owner's path decides (and answers 404 for a node the caller cannot see).
   */
  async function subOfferFor(principal: Principal, key: string, body: OfferBody, now: Date): Promise<Offer | null> {
    if (principal.projectId === null || isAdmin(principal)) return null;
    checkIdOrName(key, 'node_id');
    const node = await deps.store.getNode(key, { kind: 'all' });
    if (!node || node.owner_project?.id === principal.projectId) return null;
    const held = await deps.store.subleases.heldOnNode(node.id, principal.projectId, now);
    if (held.length === 0) return null;
    const label = node.name ?? node.id;
    const asked = { start: body.start ? new Date(body.start) : undefined, end: body.end ? new Date(body.end) : undefined };
    if (asked.start) checkWithinHorizon(asked.start, now, 'start');
    if (asked.end) checkWithinHorizon(asked.end, now, 'end');
    const parent = parentFor(held, asked.start, now);
    if (!parent) {
      const windows = held.map((h) => ({ start: h.start.toISOString(), end: h.end.toISOString() }));
      throw new PolicyViolationError(`a sub-offer must start within your lease on node ${label} (rule ${SubleaseRule.WithinLease})`, {
        details: { rule: SubleaseRule.WithinLease, field: 'start', leased: windows },
      });
    }
    if (!deps.policy.allows(SUBLEASE_RULE, subleaseSubject(principal, parent, false))) throw subleaseRefusal(principal, parent, label);
    const window = subOfferWindow(parent, asked, now);
    if (window.end.getTime() <= Math.max(window.start.getTime(), now.getTime())) {
      throw new InvalidRequestError('end must be after start and in the future', { details: { field: 'end' } });
    }
    const max = body.max_lease_duration === undefined ? null : parseDuration(body.max_lease_duration, 'max_lease_duration');
    const min = body.min_lease_duration === undefined ? null : parseDuration(body.min_lease_duration, 'min_lease_duration');
    if (max !== null && max <= 0) throw new InvalidRequestError('max_lease_duration must be longer than zero', { details: { field: 'max_lease_duration' } });
    if (max !== null && min !== null && min > max) {
      throw new InvalidRequestError('min_lease_duration is longer than max_lease_duration', { details: { field: 'min_lease_duration' } });
    }
    // The owner's to give; a lessee cannot promise the node back before its own lease ends.
    if (body.reclaim_notice !== undefined) {
      throw new PolicyViolationError('reclaim_notice is the node owner\'s to set; a sub-offer ends with your lease', { details: { rule: SubleaseRule.WithinLease, field: 'reclaim_notice' } });
    }
    const allowed = body.allowed_projects === undefined ? null : await projectIds(body.allowed_projects, 'allowed_projects');
    const by = { actor: principal.userName, actor_user_id: localUserId(principal) };
    const offer = await deps.store.leasing.createOffer(
      { node_id: node.id, project_id: principal.projectId, start: window.start, end: window.end, max_lease_ms: max, min_lease_ms: min, allowed_projects: allowed, created_by: localUserId(principal), parent_allocation_id: parent.id },
      [
        {
          type: 'offer.created',
          ...by,
          node_id: node.id,
          lease_id: parent.lease_id,
          project_id: principal.projectId,
          owner_project_id: node.owner_project?.id ?? null,
          message: `${label} sub-offered from lease ${parent.lease_id} until ${window.end.toISOString()}`,
          details: { sublease_of: parent.lease_id, start: window.start.toISOString(), end: window.end.toISOString() },
        },
      ],
      now,
    );
    return offer;
  }

  router.openapi(listOffers, async (c) => {
    const principal = c.get('principal');
    const q = c.req.valid('query');
    let nodeId: string | undefined;
    if (q.node_id !== undefined) nodeId = (await nodeIdFor(q.node_id)) ?? NIL_UUID;
    let ownerId: string | undefined;
    if (q.owner !== undefined) ownerId = (await deps.store.findProject(q.owner))?.id ?? NIL_UUID;
    let nodeIds: string[] | undefined;
    if (q.where !== undefined) nodeIds = await nodesMatching(deps, principal, q.where);
    if (q.from !== undefined && q.to !== undefined && Date.parse(q.to) <= Date.parse(q.from)) {
      throw new InvalidRequestError('to must be after from', { details: { field: 'to' } });
    }
    if ((q.free_from === undefined) !== (q.free_to === undefined)) {
      throw new InvalidRequestError('give free_from and free_to together', { details: { field: 'free_to' } });
    }
    const now = deps.clock.now();
    const page = await deps.store.leasing.listOffers(
      {
        node_id: nodeId,
        node_ids: nodeIds,
        project_id: ownerId,
        id_prefix: q.id_prefix,
        status: q.status,
        overlapping:
          q.from === undefined && q.to === undefined
            ? undefined
            : { from: q.from ? new Date(q.from) : now, to: q.to ? new Date(q.to) : null },
        visible_to: isAdmin(principal) ? undefined : (principal.projectId ?? undefined),
        now,
      },
      { limit: q.limit, marker: q.marker },
    );
    let offers = await render(page.items);
    if (q.free_from !== undefined && q.free_to !== undefined) {
      const from = Date.parse(q.free_from);
      const to = Date.parse(q.free_to);
      offers = offers.filter((o) => o.free_windows.some((w) => Date.parse(w.start) <= from && (w.end === null || Date.parse(w.end) >= to)));
    }
    return c.json({ offers, next: nextLink(c.req.url, page) }, 200);
  });

  async function nodeIdFor(key: string): Promise<string | null> {
    return (await deps.store.getNode(key, { kind: 'all' }))?.id ?? null;
  }

  async function visibleOffer(principal: Principal, id: string): Promise<Offer> {
    const offer = await deps.store.leasing.getOffer(id);
    if (!offer || !canSee(principal, offer)) throw new NotFoundError('offer', id);
    return offer;
  }

  router.openapi(getOffer, async (c) => {
    const offer = await visibleOffer(c.get('principal'), c.req.valid('param').id);
    return c.json((await render([offer]))[0]!, 200);
  });

  router.openapi(deleteOffer, async (c) => {
    const principal = c.get('principal');
    const offer = await visibleOffer(principal, c.req.valid('param').id);
    if (!isAdmin(principal) && offer.project_id !== principal.projectId) throw new ForbiddenError("only the node's owner or an operator can withdraw an offer");
    if (!isAdmin(principal) && principal.role === 'reader') throw new ForbiddenError('readers cannot withdraw offers; a member can');
    await deps.store.leasing.withdrawOffer(
      offer.id,
      [{ type: 'offer.withdrawn', actor: principal.userName, actor_user_id: localUserId(principal), node_id: offer.node_id, owner_project_id: offer.project_id }],
      deps.clock.now(),
    );
    const node = await deps.store.getNode(offer.node_id, { kind: 'all' });
    await deps.lifecycle.offerWithdrawn(offer.node_id, node?.name ?? offer.node_id, principal);
    return c.body(null, 204);
  });

  return router;
}
