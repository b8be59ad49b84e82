import { createRoute, z } from '@hono/zod-openapi';
import { ForbiddenError, NotFoundError } from '../../domain/errors.js';
import type { Principal } from '../../domain/identity.js';
import type { Allocation, Lease } from '../../domain/leasing.js';
import { canChangeLeasesOf, isAdmin } from '../../domain/policy.js';
import { FailureKind } from '../../domain/replacement.js';
import { createRouter, type ApiDeps } from '../context.js';
import { leaseNames } from '../lease-names.js';
import { IdOrName, errorResponses, jsonResponse, safeText } from '../schemas.js';
import { leaseJson } from '../serializers.js';
import { LeaseSchema } from './leases.js';

const Params = z.object({
  id: IdOrName.openapi({ param: { name: 'id', in: 'path' }, description: 'The lease id.' }),
  node: IdOrName.openapi({ param: { name: 'node', in: 'path' }, description: 'A node of the lease: uuid or name.' }),
});

const replace = createRoute({
  method: 'post',
  path: '/v1/leases/{id}/allocations/{node}/replace',
  tags: ['leases'],
  summary: "Replace one of a lease's nodes by an equivalent one",
  description:
    'For a node that works but misbehaves (a failed node is replaced by itself under `replace: auto`). The substitute meets the ' +
    "node's group expression (or, for a named node, has at least its facts and traits), is the best fit, free and allowed for the rest " +
    "of the lease; it is handed over at once and the node leaves the lease now, as at an end (its lessee cleared, its networks off, " +
    'wiped). 409 lease_unavailable, saying why, when no substitute exists (the lease keeps its node). The lessee\'s members or an operator.',
  request: { params: Params, body: { required: false, content: { 'application/json': { schema: z.object({ reason: safeText(500).optional() }).strict() } } } },
  responses: { 200: jsonResponse(LeaseSchema, 'The lease with the substitute'), ...errorResponses(400, 401, 403, 404, 409, 503) },
});

const release = createRoute({
  method: 'delete',
  path: '/v1/leases/{id}/allocations/{node}',
  tags: ['leases'],
  summary: 'Give one node of a lease back now (partial return)',
  description:
    'The node leaves the lease now, as at an end (access cut at once, wiped, back in the pool); the rest of the lease goes on. Giving ' +
    "back the last node ends the lease. The lessee's members or an operator.",
  request: { params: Params },
  responses: { 200: jsonResponse(LeaseSchema, 'The lease as it is now'), ...errorResponses(400, 401, 403, 404, 409, 503) },
});

/** A lease's nodes one at a time: replace one, give one back (leasing/lifecycle-service.ts). */
export function allocationRoutes(deps: ApiDeps) {
  const router = createRouter();

  /** The lease and its allocation on `node` that is still in it, for a caller who may change the lease; 404 otherwise. */
  async function target(principal: Principal, id: string, node: string): Promise<{ lease: Lease; allocation: Allocation }> {
    const lease = await deps.store.leasing.getLease(id);
    if (!lease || !(isAdmin(principal) || lease.project_id === principal.projectId)) throw new NotFoundError('lease', id);
    if (!canChangeLeasesOf(principal, lease.project_id)) throw new ForbiddenError("only the lessee's members or an operator can change a lease's nodes");
    const found = await deps.store.getNode(node, { kind: 'all' });
    // Still in the lease: not left, not ended (a lease ended a moment ago may not be released yet).
    const now = deps.clock.now().getTime();
    const allocation = lease.allocations.find(
      (a) => (a.node_id === node || a.node_id === found?.id) && a.leave_reason === null && a.end.getTime() > now && ['reserved', 'starting', 'active'].includes(a.state),
    );
    if (!allocation) {
      throw new NotFoundError('allocation', node, { details: { lease_id: lease.id, hint: `node ${node} is not (or no longer) in lease ${lease.name}` } });
    }
    return { lease, allocation };
  }

  router.openapi(replace, async (c) => {
    const principal = c.get('principal');
    const { id, node } = c.req.valid('param');
    const { lease, allocation } = await target(principal, id, node);
    const body = (c.req.valid('json') as { reason?: string } | undefined) ?? {};
    const reason = `${principal.userName} asked for another node${body.reason ? `: ${body.reason}` : ''}`;
    const outcome = await deps.lifecycle.replace(lease, allocation, { kind: FailureKind.Requested, reason }, principal);
    return c.json(leaseJson(outcome.lease, await leaseNames(deps, [outcome.lease]), deps.clock.now()), 200);
  });

  router.openapi(release, async (c) => {
    const principal = c.get('principal');
    const { id, node } = c.req.valid('param');
    const { lease, allocation } = await target(principal, id, node);
    const updated = await deps.lifecycle.returnNode(lease, allocation, principal);
    return c.json(leaseJson(updated, await leaseNames(deps, [updated]), deps.clock.now()), 200);
  });

  return router;
}
