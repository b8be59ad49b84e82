import { createRoute, z } from '@hono/zod-openapi';
import { NIL_UUID } from '../../domain/ids.js';
import { formatDuration, parseDuration } from '../../domain/duration.js';
import { ForbiddenError, InvalidRequestError, NotFoundError } from '../../domain/errors.js';
import type { Principal, Project } from '../../domain/identity.js';
import { LEASE_STATES, type Lease, type LeaseState } from '../../domain/leasing.js';
import { REPLACE_POLICIES, type ReplacePolicy } from '../../domain/replacement.js';
import { checkWithinHorizon } from '../../domain/time-bounds.js';
import { canChangeLeasesOf, canLeaseFor, canSeeProject, isAdmin } from '../../domain/policy.js';
import { LEASE_ORDERS, type LeaseOrder } from '../../store/leasing-store.js';
import type { LeaseAsk } from '../../leasing/lease-planner.js';
import { createRouter, type ApiDeps } from '../context.js';
import { ProjectLoader } from '../project-loader.js';
import { NextLink, PageQuery, nextLink } from '../pagination.js';
import { DurationInput, ExpressionInput, IdOrName, IdParam, IdPrefix, TimeInput, errorResponses, jsonBody, jsonResponse, safeName } from '../schemas.js';
import { leaseNames } from '../lease-names.js';
import { leaseJson, type LeaseNames } from '../serializers.js';
import { AutoRenewInput, AutoRenewOut, NoticeOut, parseAutoRenew } from '../extension-schemas.js';

/** A lease's start and end book time: within 10 years of now (checked against the clock in ask()). */
const Time = TimeInput.openapi({ description: 'RFC 3339, within 10 years of now.' });
const STATES = LEASE_STATES as [LeaseState, ...LeaseState[]];

const ReplaceInput = z.enum(REPLACE_POLICIES as [ReplacePolicy, ...ReplacePolicy[]]).openapi({
  description:
    'When a node fails (maintenance, a broken provision state, a quarantine, gone from Ironic): `auto` (default) re-plans it onto an ' +
    'equivalent node at once; `ask` records `lease.degraded` and lets the lessee ask (POST …/allocations/{node}/replace); `never` records only.',
});

const LeaseBody = z
  .object({
    name: safeName(100, { trim: true }).optional(),
    start: Time.optional().openapi({ description: 'Default: now. A future start is an advance reservation. Within 10 years of now.' }),
    end: Time.optional(),
    duration: DurationInput.optional().openapi({ description: 'Instead of end: ISO 8601 ("P3D") or short ("3d"), at most P3653D (10 years).' }),
    nodes: z.array(IdOrName).max(1000).optional().openapi({ description: 'Node uuids or names.' }),
    groups: z
      .array(
        z
          .object({
            count: z.number().int().min(1).max(1000),
            where: ExpressionInput,
          })
          .strict(),
      )
      .max(50)
      .optional(),
    replace: ReplaceInput.optional(),
    auto_renew: AutoRenewInput.optional(),
    project: IdOrName.optional().openapi({
      description:
        'The project the lease is for (id or name); default: the caller\'s. Only the operator (admin) may name another project: the ' +
        "lease is then that project's in every way (its quota, budget and offers' allow-lists apply) and the audit log names the " +
        'operator as the actor. Anyone else naming a project not its own gets 403.',
    }),
  })
  .strict();

/** A lease at the other end of a sub-leasing link (one level, as ESI). */
const LinkedLeaseFields = z.object({ lease_id: z.string(), lease_name: z.string(), project_id: z.string(), project_name: z.string(), start: z.string(), end: z.string(), state: z.string() });
export const LinkedLeaseSchema = LinkedLeaseFields.openapi('LinkedLease', {
    description:
      "The other end of a sub-leasing link with its window on the node: on an allocation's `sublease_of`, the lease it is sub-leased from " +
      '(the node is this lease\'s only inside both windows); in `subleases`, a sub-lease carved from it (its lessee has no access meanwhile).',
  });

/**
 * Two numbers for one group, on purpose: `group` indexes `request.groups` (from 0, for programs), `group_number` is
 * what people read — messages ("group 1 (3 × …)"), the CLI's tables and the web UI count from 1 — so a script
 * reading `--json` finds the number the table showed.
 */
const GroupIndex = z.number().openapi({ description: "The group's index in `request.groups`, from 0 (a named node's group comes after them)." });
const GroupNumber = z.number().openapi({ description: 'The same group numbered from 1, as messages, the CLI and the web UI number groups.' });

export const LeaseSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    project_id: z.string(),
    project_name: z.string().openapi({ description: "The lessee project's name (an owner sees who leases its nodes)." }),
    state: z.enum(STATES),
    start: z.string(),
    end: z.string(),
    request: z.object({
      nodes: z.array(z.string()).optional(),
      groups: z.array(z.object({ count: z.number(), where: z.string() })).optional(),
    }),
    allocations: z.array(
      z.object({
        node_id: z.string(),
        node_name: z.string().nullable(),
        group: GroupIndex,
        group_number: GroupNumber,
        state: z.string(),
        step: z.string().nullable(),
        last_error: z.string().nullable(),
        start: z.string().openapi({ description: "When the node is the lease's (a substitute's starts when it took over)." }),
        end: z.string().openapi({ description: 'When the node leaves the lease: its end, or earlier when it left early.' }),
        leave_reason: z
          .enum(['returned', 'replaced', 'reclaimed', 'failed', 'parent_ended'])
          .nullable()
          .openapi({ description: 'Why the node left (or leaves) the lease before its end, or null (`parent_ended`: a sub-lease whose parent lease let go of the node).' }),
        replaces: z.string().nullable().openapi({ description: 'The node this one took the place of, or null.' }),
        failure: z.string().nullable().openapi({ description: 'A failure of the node recorded while the lease keeps it (no substitute, or the lease asked for none).' }),
        // Inline, not the shared component: a nullable reference made the component itself nullable.
        sublease_of: LinkedLeaseFields.nullable().openapi({ description: 'A sub-lease: the lease it is sub-leased from (a LinkedLease), or null.' }),
        subleases: z.array(LinkedLeaseSchema).openapi({ description: 'Sub-leases carved from this node\'s window (its lessee has no access to the node during them).' }),
      }),
    ),
    replace_policy: ReplaceInput,
    auto_renew: AutoRenewOut.nullable().openapi({ description: 'The lessee\'s auto-renew, or null.' }),
    notices: z.array(NoticeOut).openapi({ description: "`lease.ending_soon` notices of the current end, in the order they fall due." }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Lease');

const QuoteSchema = z
  .object({
    start: z.string(),
    end: z.string(),
    duration: z.string(),
    allocations: z.array(z.object({ node_id: z.string(), node_name: z.string().nullable(), group: GroupIndex, group_number: GroupNumber })),
  })
  .openapi('Quote');

const unmet =
  '409 lease_unavailable: the message says per group what was short; error.details.earliest_start is the earliest ' +
  'time the whole request fits (null if none within a year). 409 policy_violation: the project quota refuses it.';

const createLease = createRoute({
  method: 'post',
  path: '/v1/leases',
  tags: ['leases'],
  summary: 'Lease nodes by name or by requirement groups, all or nothing',
  description: unmet,
  request: { body: jsonBody(LeaseBody) },
  responses: { 201: jsonResponse(LeaseSchema, 'The lease'), ...errorResponses(400, 401, 403, 409) },
});

const quoteLease = createRoute({
  method: 'post',
  path: '/v1/leases/quote',
  tags: ['leases'],
  summary: 'What a lease request would get now, changing nothing',
  description: unmet,
  request: { body: jsonBody(LeaseBody) },
  responses: { 200: jsonResponse(QuoteSchema, 'The nodes it would get'), ...errorResponses(400, 401, 403, 409) },
});

const listLeases = createRoute({
  method: 'get',
  path: '/v1/leases',
  tags: ['leases'],
  summary: "List leases: your project's, and those on nodes you own",
  request: {
    query: z.object({
      ...PageQuery,
      project: IdOrName.optional().openapi({ description: 'The lessee project (id or name).' }),
      name: IdOrName.optional().openapi({ description: 'Only leases of exactly this name (names are not unique).' }),
      id_prefix: IdPrefix.optional(),
      state: z.enum(STATES).optional(),
      node_id: IdOrName.optional(),
      owner: IdOrName.optional().openapi({
          description:
            "Project id or name: only leases on nodes that project owns (the owner's \"who leases my nodes\"). " +
            'Only the operator may name another project; for anyone else that list is empty.',
        }),
      order: z
        .enum(LEASE_ORDERS as [LeaseOrder, ...LeaseOrder[]])
        .default('start')
        .openapi({
          description:
            '`start` (default): by start, earliest first. `newest`: most recently created first (leases created in the same instant by id). ' +
            'The `next` link keeps the order.',
        }),
    }),
  },
  responses: { 200: jsonResponse(z.object({ leases: z.array(LeaseSchema), next: NextLink }), 'A page of leases'), ...errorResponses(400, 401) },
});

const getLease = createRoute({
  method: 'get',
  path: '/v1/leases/{id}',
  tags: ['leases'],
  summary: 'Show a lease with its allocations and their progress',
  request: { params: IdParam },
  responses: { 200: jsonResponse(LeaseSchema, 'The lease'), ...errorResponses(401, 404) },
});

const patchLease = createRoute({
  method: 'patch',
  path: '/v1/leases/{id}',
  tags: ['leases'],
  summary: 'Extend or shorten a lease',
  description:
    'An extension must fit the offers, their policy (extension window, horizon, total length: 409 policy_violation with ' +
    'error.details.rule), the quota and the next lease on every node; nothing changes when refused.',
  request: {
    params: IdParam,
    body: jsonBody(
      z
        .object({ end: Time.optional(), replace: ReplaceInput.optional(), auto_renew: AutoRenewInput.nullable().optional() })
        .strict()
        .refine((b) => b.end !== undefined || b.replace !== undefined || b.auto_renew !== undefined, {
          message: 'give `end` (a new end), `replace` (a policy) or `auto_renew` (null: off)',
          path: ['end'],
        }),
    ),
  },
  responses: { 200: jsonResponse(LeaseSchema, 'The lease'), ...errorResponses(400, 401, 403, 404, 409) },
});

const deleteLease = createRoute({
  method: 'delete',
  path: '/v1/leases/{id}',
  tags: ['leases'],
  summary: 'Cancel a lease that has not started, or end an active one now',
  request: { params: IdParam },
  responses: { 200: jsonResponse(LeaseSchema, 'The lease, cancelled or ending'), ...errorResponses(401, 403, 404, 409) },
});

/** An owner filter that matches no node (an unknown project, or one the caller may not ask about). */
const NO_OWNER = { project_id: NIL_UUID, project_name: NIL_UUID };

export function leaseRoutes(deps: ApiDeps) {
  const router = createRouter();
  const projects = new ProjectLoader(deps.store);

  /**
   * The project a lease (or a quote) is for: the caller's own, or the one it names. Only the operator acts for
   * another project; anyone else naming one (known or not: no probing for names) is refused before anything else.
   */
  async function leaseProject(principal: Principal, asked: string | undefined): Promise<Project> {
    if (asked === undefined) {
      const own = principal.projectId ? await projects.byId(principal.projectId) : null;
      if (!own) {
        throw new ForbiddenError(
          'leases belong to a project: as an operator without one, name the project to lease for (`project` in the request; ' +
            '`leasehold lease create --project NAME`)',
          { details: { field: 'project' } },
        );
      }
      return own;
    }
    const project = await deps.store.findProject(asked);
    if (!project || !canLeaseFor(principal, project.id)) {
      if (!isAdmin(principal)) {
        throw new ForbiddenError('only an operator (admin) can lease for another project; leave out `project` to lease for your own', {
          details: { field: 'project' },
        });
      }
      throw new InvalidRequestError(`project: no project has the id or name ${JSON.stringify(asked)}`, { details: { field: 'project' } });
    }
    return project;
  }

  function ask(body: z.infer<typeof LeaseBody>): LeaseAsk {
    const now = deps.clock.now();
    if (body.start) checkWithinHorizon(new Date(body.start), now, 'start');
    if (body.end) checkWithinHorizon(new Date(body.end), now, 'end');
    return {
      start: body.start ? new Date(body.start) : undefined,
      end: body.end ? new Date(body.end) : undefined,
      durationMs: body.duration === undefined ? undefined : parseDuration(body.duration, 'duration'),
      nodes: body.nodes,
      groups: body.groups,
    };
  }

  const names = (leases: readonly Lease[]): Promise<LeaseNames> => leaseNames(deps, leases);

  /** The lessee, the operator, and the owners of its nodes (read only) see a lease; others get 404. */
  async function visibleLease(principal: Principal, id: string): Promise<Lease> {
    const lease = await deps.store.leasing.getLease(id);
    if (lease && (isAdmin(principal) || lease.project_id === principal.projectId)) return lease;
    if (lease && principal.projectId && principal.projectName) {
      // The owner of any of its nodes (ownership only: no `now`, so not through a lease of its own).
      const owner = { kind: 'project', projectId: principal.projectId, projectName: principal.projectName } as const;
      for (const a of lease.allocations) {
        if (await deps.store.getNode(a.node_id, owner)) return lease;
      }
    }
    throw new NotFoundError('lease', id);
  }

  router.openapi(quoteLease, async (c) => {
    const body = c.req.valid('json');
    const project = await leaseProject(c.get('principal'), body.project);
    const plan = await deps.leasing.quote(project, ask(body));
    return c.json(
      {
        start: plan.start.toISOString(),
        end: plan.end.toISOString(),
        duration: formatDuration(plan.end.getTime() - plan.start.getTime()),
        allocations: plan.allocations.map((a) => ({ node_id: a.node_id, node_name: plan.nodes.get(a.node_id)?.name ?? null, group: a.group_index, group_number: a.group_index + 1 })),
      },
      200,
    );
  });

  router.openapi(createLease, async (c) => {
    const principal = c.get('principal');
    const body = c.req.valid('json');
    const project = await leaseProject(principal, body.project);
    if (!canChangeLeasesOf(principal, project.id)) throw new ForbiddenError('readers cannot create leases; a member can');
    const asked = ask(body);
    // `max_total` counts from the start: the asked one, or now (the planner starts a lease without one now).
    const autoRenew = body.auto_renew ? parseAutoRenew(body.auto_renew, asked.start ?? deps.clock.now()) : undefined;
    if (body.auto_renew?.until) checkWithinHorizon(new Date(body.auto_renew.until), deps.clock.now(), 'auto_renew.until');
    const lease = await deps.leasing.create(project, asked, { name: body.name, actor: principal, replace: body.replace, autoRenew });
    // An operator acting for a project: the log says so beside the audit event (whose actor is the operator).
    c.get('log').info({ lease: lease.id, nodes: lease.allocations.length, project: project.id, on_behalf: principal.projectId !== project.id }, 'lease created');
    return c.json(leaseJson(lease, await names([lease]), deps.clock.now()), 201);
  });

  router.openapi(listLeases, async (c) => {
    const principal = c.get('principal');
    const q = c.req.valid('query');
    let projectId: string | undefined;
    if (q.project !== undefined) projectId = (await deps.store.findProject(q.project))?.id ?? NIL_UUID;
    let nodeId: string | undefined;
    if (q.node_id !== undefined) nodeId = (await deps.store.getNode(q.node_id, { kind: 'all' }))?.id ?? q.node_id;
    let owner: { project_id: string; project_name: string } | undefined;
    if (q.owner !== undefined) {
      const project = await deps.store.findProject(q.owner);
      // Another project's nodes are none of a project's business: as if that project owned nothing.
      owner = project && canSeeProject(principal, project.id) ? { project_id: project.id, project_name: project.name } : NO_OWNER;
    }
    const visible =
      isAdmin(principal) || !principal.projectId || !principal.projectName
        ? undefined
        : { project_id: principal.projectId, project_name: principal.projectName };
    const page = await deps.store.leasing.listLeases(
      { project_id: projectId, name: q.name, id_prefix: q.id_prefix, state: q.state, node_id: nodeId, owner, visible_to: visible },
      { limit: q.limit, marker: q.marker },
      q.order,
    );
    const map = await names(page.items);
    return c.json({ leases: page.items.map((l) => leaseJson(l, map, deps.clock.now())), next: nextLink(c.req.url, page) }, 200);
  });

  router.openapi(getLease, async (c) => {
    const lease = await visibleLease(c.get('principal'), c.req.valid('param').id);
    return c.json(leaseJson(lease, await names([lease]), deps.clock.now()), 200);
  });

  router.openapi(patchLease, async (c) => {
    const principal = c.get('principal');
    const lease = await visibleLease(principal, c.req.valid('param').id);
    if (!canChangeLeasesOf(principal, lease.project_id)) throw new ForbiddenError("only the lessee's members or an operator can change a lease");
    const body = c.req.valid('json');
    // Every part of the request is checked before any is applied: a refused request changes nothing.
    if (body.auto_renew?.until) checkWithinHorizon(new Date(body.auto_renew.until), deps.clock.now(), 'auto_renew.until');
    const renew = body.auto_renew ? parseAutoRenew(body.auto_renew, lease.start) : null;
    const newEnd = body.end !== undefined ? new Date(body.end) : lease.end;
    if (renew && renew.until.getTime() <= newEnd.getTime()) {
      throw new InvalidRequestError(`auto_renew.until must be after the lease's end (${newEnd.toISOString()})`, { details: { field: 'auto_renew.until' } });
    }
    let updated = lease;
    if (body.end !== undefined) {
      const end = new Date(body.end);
      const now = deps.clock.now();
      checkWithinHorizon(end, now, 'end');
      if (end.getTime() <= Math.max(now.getTime(), lease.start.getTime())) {
        throw new InvalidRequestError('end must be after the start and in the future; to end the lease now, use `leasehold lease cancel` (DELETE the lease)', {
          details: { field: 'end' },
        });
      }
      const project = (await deps.store.findProject(lease.project_id))!;
      updated = await deps.leasing.changeEnd(project, lease, end, principal);
    }
    if (body.replace !== undefined && body.replace !== updated.replace_policy) updated = await deps.leasing.setReplacePolicy(updated, body.replace, principal);
    if (body.auto_renew !== undefined) updated = await deps.leasing.setAutoRenew(updated, renew, principal);
    return c.json(leaseJson(updated, await names([updated]), deps.clock.now()), 200);
  });

  router.openapi(deleteLease, async (c) => {
    const principal = c.get('principal');
    const lease = await visibleLease(principal, c.req.valid('param').id);
    if (!canChangeLeasesOf(principal, lease.project_id)) throw new ForbiddenError("only the lessee's members or an operator can end a lease");
    const updated = await deps.leasing.end(lease, principal);
    return c.json(leaseJson(updated, await names([updated]), deps.clock.now()), 200);
  });

  return router;
}
