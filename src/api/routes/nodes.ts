import { createRoute, z } from '@hono/zod-openapi';
import { ForbiddenError, InvalidRequestError } from '../../domain/errors.js';
import { canManageOwnedNode, canSetNodeOwner, canSyncInventory, nodeVisibility } from '../../domain/policy.js';
import { createRouter, type ApiDeps } from '../context.js';
import { nodeForCaller, nodesMatching } from '../../access/node-access.js';
import { jsonText } from '../json-text.js';
import { listBody, NodeListJson } from '../node-list-json.js';
import { NextLink, PageQuery, nextLink } from '../pagination.js';
import { ExpressionInput, IdOrName, IdParam, IdPrefix, NodeSchema, errorResponses, jsonBody, jsonResponse, safeName } from '../schemas.js';
import { projectNamesOf } from '../project-names.js';
import { nodeJson, type NamedCurrentLease } from '../serializers.js';
import type { CurrentLease } from '../../store/leasing-store.js';
import { localUserId } from '../../domain/identity.js';

const NodeQuery = z.object({
  ...PageQuery,
  owner: IdOrName.optional().openapi({ description: 'Owner project id or name.' }),
  resource_class: safeName().optional(),
  provision_state: safeName().optional(),
  power_state: safeName().optional(),
  maintenance: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
  id_prefix: IdPrefix.optional(),
  where: ExpressionInput.optional().openapi({ description: 'Requirement expression the node must match, e.g. `gpus >= 2 and memory >= 256GiB` (the grammar of lease groups).' }),
});

const NodeListSchema = z.object({ nodes: z.array(NodeSchema), next: NextLink });

const listNodes = createRoute({
  method: 'get',
  path: '/v1/nodes',
  tags: ['nodes'],
  summary: 'List the nodes you can see',
  description:
    'The operator sees every node; a project sees the nodes it owns and those it leases now. Sorted by name. ' +
    '`where` keeps the nodes matching a requirement expression; a bad one is a 400 naming the position and the facts known.',
  request: { query: NodeQuery },
  responses: {
    200: jsonResponse(NodeListSchema, 'A page of nodes'),
    ...errorResponses(400, 401),
  },
});

const getNode = createRoute({
  method: 'get',
  path: '/v1/nodes/{id}',
  tags: ['nodes'],
  summary: 'Show a node by uuid or name',
  request: { params: IdParam },
  responses: { 200: jsonResponse(NodeSchema, 'The node'), ...errorResponses(401, 404) },
});

const patchNode = createRoute({
  method: 'patch',
  path: '/v1/nodes/{id}',
  tags: ['nodes'],
  summary: "Set a node's owner (operator, written through to the driver) or clear its quarantine (owner)",
  request: {
    params: IdParam,
    body: jsonBody(
      z
        .object({
          owner: IdOrName.nullable()
            .optional()
            .openapi({ description: 'Project id or name; stored in Ironic as the project id. null clears it. Operator only.' }),
          quarantined: z
            .literal(false)
            .optional()
            .openapi({ description: "false clears a quarantine (the node's owner or the operator)." }),
        })
        .strict()
        .refine((b) => b.owner !== undefined || b.quarantined !== undefined, 'give owner or quarantined'),
    ),
  },
  responses: { 200: jsonResponse(NodeSchema, 'The updated node'), ...errorResponses(400, 401, 403, 404, 409, 503) },
});

const syncNodes = createRoute({
  method: 'post',
  path: '/v1/nodes/sync',
  tags: ['nodes'],
  summary: 'Re-read the inventory from the hardware driver now (operator)',
  responses: {
    200: jsonResponse(
      z.object({ added: z.number(), updated: z.number(), removed: z.number(), unchanged: z.number() }),
      'What changed',
    ),
    ...errorResponses(401, 403, 503),
  },
});

export function nodeRoutes(deps: ApiDeps) {
  const router = createRouter();
  const nodeList = new NodeListJson(deps);

  /** The lease in force with its lessee's name (one query), so `node show` says who has the node by name. */
  async function withLesseeName(lease: CurrentLease | null): Promise<NamedCurrentLease | null> {
    if (!lease) return null;
    const names = await projectNamesOf(deps.store, [lease.project_id]);
    return { ...lease, project_name: names.get(lease.project_id) ?? lease.project_id };
  }

  router.openapi(listNodes, async (c) => {
    const { limit, marker, where, ...filter } = c.req.valid('query');
    const principal = c.get('principal');
    const ids = where === undefined ? undefined : await nodesMatching(deps, principal, where);
    const page = await nodeList.page(principal, { ...filter, ids }, nodeVisibility(principal, deps.clock.now()), { limit, marker });
    // Written as bytes: each node's JSON is this replica's copy, made again only when the node changed.
    return jsonText<z.infer<typeof NodeListSchema>>(listBody(page.items, nextLink(c.req.url, page)));
  });

  router.openapi(syncNodes, async (c) => {
    if (!canSyncInventory(c.get('principal'))) throw new ForbiddenError('only an operator (admin) can sync the inventory');
    const result = await deps.inventory.syncAll();
    return c.json(result, 200);
  });

  router.openapi(getNode, async (c) => {
    const { node, access, lease } = await nodeForCaller(deps, c.get('principal'), c.req.valid('param').id);
    // The chain, for one node only (a list would ask once per node): the lease a sub-lease is carved from.
    const sublease_of = lease ? await deps.store.subleases.parentOnNode(node.id, lease.lease_id, deps.clock.now()) : null;
    return c.json(nodeJson(node, { access, lease: await withLesseeName(lease), sublease_of }), 200);
  });

  router.openapi(patchNode, async (c) => {
    const principal = c.get('principal');
    const found = await nodeForCaller(deps, principal, c.req.valid('param').id);
    const body = c.req.valid('json');
    if (body.owner !== undefined && !canSetNodeOwner(principal)) {
      throw new ForbiddenError("only an operator (admin) can change a node's owner");
    }
    if (body.quarantined !== undefined && !canManageOwnedNode(principal, found.access)) {
      throw new ForbiddenError("only the node's owner or an operator can clear its quarantine");
    }
    const id = found.node.id;
    if (body.owner !== undefined) {
      let ownerId: string | null = null;
      if (body.owner !== null) {
        const project = await deps.store.findProject(body.owner);
        if (!project) {
          throw new InvalidRequestError(`owner: no project has the id or name ${JSON.stringify(body.owner)}`, {
            details: { field: 'owner' },
          });
        }
        ownerId = project.id;
      }
      await deps.driver.updateNode(id, { owner: ownerId });
      await deps.inventory.refreshNode(id);
      await deps.store.leasing.appendEvents(
        [{ type: 'node.owner_set', actor: principal.userName, actor_user_id: localUserId(principal), node_id: id, owner_project_id: ownerId, details: { owner: ownerId } }],
        deps.clock.now(),
      );
    }
    if (body.quarantined === false && found.node.quarantined_at) {
      await deps.store.leasing.clearQuarantine(
        id,
        [{ type: 'node.quarantine_cleared', actor: principal.userName, actor_user_id: localUserId(principal), node_id: id, owner_project_id: found.node.owner_project?.id ?? null }],
        deps.clock.now(),
      );
    }
    const { node, access, lease } = await nodeForCaller(deps, principal, id);
    return c.json(nodeJson(node, { access, lease: await withLesseeName(lease) }), 200);
  });

  return router;
}

