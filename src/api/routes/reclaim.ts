import { createRoute, z } from '@hono/zod-openapi';
import { nodeForCaller } from '../../access/node-access.js';
import { ForbiddenError, InvalidRequestError } from '../../domain/errors.js';
import { checkWithinHorizon } from '../../domain/time-bounds.js';
import { createRouter, type ApiDeps } from '../context.js';
import { IdParam, TimeInput, errorResponses, jsonBody, jsonResponse } from '../schemas.js';

const ReclaimResult = z
  .object({
    node_id: z.string(),
    at: z.string(),
    leases: z.array(
      z.object({
        lease_id: z.string(),
        substitute: z.string().nullable().openapi({ description: 'The node that takes over from `at`, or null: the node simply leaves the lease then.' }),
      }),
    ),
  })
  .openapi('Reclaim');

const reclaim = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/reclaim',
  tags: ['nodes'],
  summary: 'Take a node back from its leases with notice (its owner, or the operator)',
  description:
    'Every lease on the node past `at` is told (`lease.reclaim_scheduled`, with a webhook) and gets an equivalent node from `at` ' +
    'where one is free, or the node leaves it then; the node\'s offers end at `at`. Only leases booked under an offer with a ' +
    '`reclaim_notice`, and `at` at least that notice from now: otherwise 409 policy_violation naming the lease and the earliest ' +
    'instant, and nothing changes.',
  request: { params: IdParam, body: jsonBody(z.object({ at: TimeInput.openapi({ description: 'When the node leaves its leases.' }) }).strict()) },
  responses: { 200: jsonResponse(ReclaimResult, 'What became of each lease'), ...errorResponses(400, 401, 403, 404, 409, 503) },
});

/** An owner's reclaim (leasing/lifecycle-service.ts). */
export function reclaimRoutes(deps: ApiDeps) {
  const router = createRouter();
  router.openapi(reclaim, async (c) => {
    const principal = c.get('principal');
    const ident = c.req.valid('param').id;
    const found = await nodeForCaller(deps, principal, ident);
    if (found.access === 'lessee') throw new ForbiddenError("only the node's owner (a member) or an operator can reclaim it");
    if (!deps.policy.allows('baremetal:node:update', found.subject)) throw new ForbiddenError('the policy (baremetal:node:update) does not allow you to reclaim this node: a member of its owner can');
    const at = new Date(c.req.valid('json').at);
    const now = deps.clock.now();
    checkWithinHorizon(at, now, 'at');
    if (at.getTime() < now.getTime()) throw new InvalidRequestError('at must be now or later', { details: { field: 'at' } });
    const outcomes = await deps.lifecycle.reclaim(found.node.id, found.node.name ?? found.node.id, at, principal);
    return c.json(
      { node_id: found.node.id, at: at.toISOString(), leases: outcomes.map((o) => ({ lease_id: o.lease.id, substitute: o.substitute })) },
      200,
    );
  });
  return router;
}
