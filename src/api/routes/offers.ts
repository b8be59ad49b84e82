import { createRoute, z } from '@hono/zod-openapi';
import { NIL_UUID } from '../../domain/ids.js';
import { mayUseOffer } from '../../domain/availability.js';
import { parseDuration } from '../../domain/duration.js';
import { ConflictError, ForbiddenError, InvalidRequestError, NotFoundError, PolicyViolationError } from '../../domain/errors.js';
import { MAX_RULE_LENGTH, MAX_WEEKLY_RULES } from '../../domain/scheduling/weekly-windows.js';
import { SUBLEASE_RULE, SubleaseRule, parentFor, subOfferWindow, subleaseRefusal, subleaseSubject } from '../../domain/subleasing.js';
import { checkIdOrName } from '../../domain/text-bounds.js';
import { type Principal, localUserId } from '../../domain/identity.js';
import type { Offer } from '../../domain/leasing.js';
import { canManageOwnedNode, isAdmin } from '../../domain/policy.js';
import { checkWithinHorizon } from '../../domain/time-bounds.js';
import type { NewOffer } from '../../store/leasing-store.js';
import { createRouter, type ApiDeps } from '../context.js';
import { nodeForCaller, nodesMatching } from '../../access/node-access.js';
import { NextLink, PageQuery, nextLink } from '../pagination.js';
import { DurationInput, ExpressionInput, IdOrName, IdParam, IdPrefix, NodeFactsSchema, TimeInput, errorResponses, jsonBody, jsonResponse } from '../schemas.js';
import { ExtensionPolicyFields, ExtensionPolicyOut } from '../extension-schemas.js';
import { MAX_BULK_OFFER_NODES, bulkRefusal, bulkTargets, storeProblem, type NodeProblem } from '../offer-bulk.js';
import { renderOffers } from '../offer-render.js';
import { HoldsCopy } from '../../leasing/holds-copy.js';
import { parseOfferTerms, weeklyDetails, weeklyTerms, type OfferTerms } from '../offer-terms.js';

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
    node_facts: NodeFactsSchema.nullable().openapi({
      description: "The node's typed facts as GET /v1/nodes gives them (memory and disk in bytes, cpus, gpus, cpu_arch, ...), so a lessee sees what it may lease; null when the node is gone.",
    }),
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
    weekly: z.array(z.string()).nullable().openapi({
      description: 'Recurring weekly windows (canonical rules, e.g. "mon-fri 18:00-08:00") in `timezone`: a lease lies wholly inside one. Null: the whole period.',
    }),
    timezone: z.string().nullable().openapi({ description: 'IANA timezone of `weekly`; null without weekly windows.', example: 'Europe/Berlin' }),
    weekly_summary: z.string().nullable().openapi({ description: 'The weekly windows in words, e.g. "Mon–Fri 18:00–08:00 (next day), Sat–Sun all day (UTC)".' }),
    sublease_of: z.string().nullable().openapi({
      description: "A sub-offer: the lease its lessee offers the node from (project_id is that lessee); it ends with that lease's hold on the node. Null: the owner's offer.",
    }),
    status: z.enum(STATUSES),
    free_windows: z.array(z.object({ start: z.string(), end: z.string().nullable() })).openapi({
      description: 'Where a lease could run from now on: inside the offer (and its weekly windows: the next 4 weeks of them), less bookings and cleaning gaps.',
    }),
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
type OfferBody = { start?: string; end?: string; max_lease_duration?: string; min_lease_duration?: string; reclaim_notice?: string; allowed_projects?: string[]; weekly?: string[]; timezone?: string };
const WeeklyRuleInput = z.string().min(1).max(MAX_RULE_LENGTH).regex(/^[A-Za-z0-9 ,:-]+$/, 'days, a comma, a dash, times: e.g. "mon-fri 18:00-08:00"');
const OfferBatch = z.object({ offers: z.array(OfferSchema) }).openapi('OfferBatch');

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
    'sub-lease at the same instant.\n\n' +
    `Many nodes at once (\`nodes\` or \`where\`, up to ${MAX_BULK_OFFER_NODES}): owners' offers only, under the same terms, in one transaction. When any node ` +
    'cannot be offered (unknown, not yours, no owner project, an offer in force overlapping) nothing is created and the answer is 409 `conflict` with ' +
    '`details.nodes`: per node `{node, node_id, node_name, code, message}`. An expression that matches none of your nodes is a 400.',
  request: {
    body: jsonBody(
      z
        .object({
          node_id: IdOrName.optional().openapi({ description: 'Node uuid or name: one node (answered with the offer). Exactly one of node_id, nodes, where.' }),
          nodes: z
            .array(IdOrName)
            .min(1)
            .max(MAX_BULK_OFFER_NODES)
            .optional()
            .openapi({ description: `Node uuids or names you own (operator: any), at most ${MAX_BULK_OFFER_NODES}: offered all at once or none (answered with \`offers\`).` }),
          where: ExpressionInput.optional().openapi({
            description: `Requirement expression over your nodes (operator: every node), e.g. \`gpus >= 1\`: every match offered at once or none; at most ${MAX_BULK_OFFER_NODES} may match.`,
          }),
          weekly: z
            .array(WeeklyRuleInput)
            .min(1)
            .max(MAX_WEEKLY_RULES)
            .optional()
            .openapi({
              description:
                'Recurring weekly windows in which the node is available, within start and end: `DAYS [HH:MM-HH:MM]` local times, DAYS a day (mon … sun), a range (mon-fri), a list (sat,sun) or daily; ' +
                'an end at or before the start runs into the next day; no times: the whole day. A lease must lie wholly inside one window (touching windows are one).',
              example: ['mon-fri 18:00-08:00', 'sat-sun'],
            }),
          timezone: z.string().min(1).max(64).regex(/^[A-Za-z0-9_+/-]+$/, 'an IANA name such as Europe/Berlin').optional().openapi({ description: 'IANA timezone of `weekly` (default UTC).', example: 'Europe/Berlin' }),
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
  responses: {
    201: jsonResponse(z.union([OfferSchema, OfferBatch]), 'The offer (node_id), or the offers created (nodes, where)'),
    ...errorResponses(400, 401, 403, 404, 409),
  },
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

export function offerRoutes(deps: ApiDeps) {
  const router = createRouter();
  const canSee = (p: Principal, o: Offer) => mayUseOffer({ isAdmin: isAdmin(p), projectId: p.projectId }, o);

  // This replica's copy of the windows held on nodes, for every offer this router shows (leasing/holds-copy.ts).
  const holds = new HoldsCopy(deps.store);
  const render = (offers: readonly Offer[]) => renderOffers(deps, offers, holds);

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
    const given = (['node_id', 'nodes', 'where'] as const).filter((k) => body[k] !== undefined);
    if (given.length !== 1) {
      throw new InvalidRequestError('give exactly one of node_id (a node), nodes (a list) or where (an expression)', { details: { field: given[1] ?? 'node_id' } });
    }
    if (body.node_id === undefined) {
      const created = await createMany(principal, body, now);
      c.get('log').info({ offers: created.length }, 'offers created');
      return c.json({ offers: await render(created) }, 201);
    }
    const sub = await subOfferFor(principal, body.node_id, body, now);
    if (sub) return c.json((await render([sub]))[0]!, 201);
    const { node, access } = await nodeForCaller(deps, principal, body.node_id);
    if (!canManageOwnedNode(principal, access)) throw new ForbiddenError("only the node's owner (a member) or an operator can offer it");
    if (!node.owner_project) {
      throw new ConflictError(`node ${node.name ?? node.id} has no owner project; the operator sets one first`, { details: { node_id: node.id } });
    }
    const terms = parseOfferTerms(body, now);
    const allowed = body.allowed_projects === undefined ? null : await projectIds(body.allowed_projects, 'allowed_projects');
    const offer = await deps.store.leasing.createOffer(
      ownerOffer(principal, node.id, node.owner_project.id, terms, allowed),
      [{ type: 'offer.created', actor: principal.userName, actor_user_id: localUserId(principal), node_id: node.id, owner_project_id: node.owner_project.id, message: `${node.name ?? node.id} offered`, details: weeklyDetails(terms) }],
      now,
    );
    c.get('log').info({ offer: offer.id, node: node.id }, 'offer created');
    return c.json((await render([offer]))[0]!, 201);
  });

  function ownerOffer(principal: Principal, nodeId: string, ownerId: string, terms: OfferTerms, allowed: string[] | null): NewOffer {
    return { node_id: nodeId, project_id: ownerId, allowed_projects: allowed, created_by: localUserId(principal), ...terms };
  }

  /**
   * Many nodes under the same terms, all or none: the terms checked first (a 400 before any node is looked at),
   * then every node (unknown, not the caller's, no owner project, an offer in force overlapping), then one
   * transaction; a node a concurrent offer took meanwhile refuses the whole batch the same way.
   */
  async function createMany(principal: Principal, body: OfferBody & { nodes?: string[]; where?: string }, now: Date) {
    const terms = parseOfferTerms(body, now);
    const allowed = body.allowed_projects === undefined ? null : await projectIds(body.allowed_projects, 'allowed_projects');
    const targets = await bulkTargets(deps, principal, body);
    const { nodes, problems } = targets;
    const asked = nodes.length + problems.length;
    const overlapping = await deps.store.leasing.offersInForce(nodes.map((n) => n.id), terms.start, terms.end);
    const taken = new Set(overlapping.filter((o) => o.parent_allocation_id === null && o.withdrawn_at === null).map((o) => o.node_id));
    const all: NodeProblem[] = [...problems];
    for (const n of nodes) {
      if (!taken.has(n.id)) continue;
      all.push({ node: targets.asked.get(n.id) ?? n.id, node_id: n.id, node_name: n.name, code: 'conflict', message: `node ${n.name ?? n.id} has an offer in force overlapping this window; withdraw it first` });
    }
    if (all.length > 0) throw bulkRefusal(all, asked);
    const by = { actor: principal.userName, actor_user_id: localUserId(principal) };
    try {
      const created = await deps.store.leasing.createOffers(
        nodes.map((n) => ({
          offer: ownerOffer(principal, n.id, n.owner_project!.id, terms, allowed),
          events: [{ type: 'offer.created', ...by, node_id: n.id, owner_project_id: n.owner_project!.id, message: `${n.name ?? n.id} offered (one of ${nodes.length})`, details: { batch: nodes.length, ...weeklyDetails(terms) } }],
        })),
        now,
      );
      return created;
    } catch (err) {
      const p = storeProblem(err, targets);
      if (p) throw bulkRefusal([p], asked);
      throw err;
    }
  }

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
    const weekly = weeklyTerms(body);
    const allowed = body.allowed_projects === undefined ? null : await projectIds(body.allowed_projects, 'allowed_projects');
    const by = { actor: principal.userName, actor_user_id: localUserId(principal) };
    const offer = await deps.store.leasing.createOffer(
      { node_id: node.id, project_id: principal.projectId, start: window.start, end: window.end, max_lease_ms: max, min_lease_ms: min, allowed_projects: allowed, created_by: localUserId(principal), parent_allocation_id: parent.id, weekly },
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

