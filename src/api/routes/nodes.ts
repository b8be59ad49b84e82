import { createRoute, z } from '@hono/zod-openapi';
import { ForbiddenError, InvalidRequestError, NotFoundError } from '../../domain/errors.js';
import { canSetNodeOwner, canSyncInventory, nodeVisibility } from '../../domain/policy.js';
import { createRouter, type ApiDeps } from '../context.js';
import { NextLink, PageQuery, nextLink } from '../pagination.js';
import { IdParam, NodeSchema, errorResponses, jsonBody, jsonResponse } from '../schemas.js';
import { nodeJson } from '../serializers.js';

const NodeQuery = z.object({
  ...PageQuery,
  owner: z.string().min(1).optional().openapi({ description: 'Owner project id or name.' }),
  resource_class: z.string().min(1).optional(),
  provision_state: z.string().min(1).optional(),
  power_state: z.string().min(1).optional(),
  maintenance: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
});

const listNodes = createRoute({
  method: 'get',
  path: '/v1/nodes',
  tags: ['nodes'],
  summary: 'List the nodes you can see',
  description: 'The operator sees every node; a project sees the nodes it owns. Sorted by name.',
  request: { query: NodeQuery },
  responses: {
    200: jsonResponse(z.object({ nodes: z.array(NodeSchema), next: NextLink }), 'A page of nodes'),
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
  summary: "Set a node's owner (operator); written through to the hardware driver",
  request: {
    params: IdParam,
    body: jsonBody(
      z
        .object({
          owner: z
            .string()
            .min(1)
            .nullable()
            .openapi({ description: 'Project id or name; stored in Ironic as the project id. null clears it.' }),
        })
        .strict(),
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

  router.openapi(listNodes, async (c) => {
    const { limit, marker, ...filter } = c.req.valid('query');
    const page = await deps.store.listNodes(filter, nodeVisibility(c.get('principal'), deps.clock.now()), { limit, marker });
    return c.json({ nodes: page.items.map(nodeJson), next: nextLink(c.req.url, page) }, 200);
  });

  router.openapi(syncNodes, async (c) => {
    if (!canSyncInventory(c.get('principal'))) throw new ForbiddenError('only an operator (admin) can sync the inventory');
    const result = await deps.inventory.syncAll();
    return c.json(result, 200);
  });

  router.openapi(getNode, async (c) => {
    const { id } = c.req.valid('param');
    const node = await deps.store.getNode(id, nodeVisibility(c.get('principal'), deps.clock.now()));
    if (!node) throw new NotFoundError('node', id);
    return c.json(nodeJson(node), 200);
  });

  router.openapi(patchNode, async (c) => {
    const principal = c.get('principal');
    const { id } = c.req.valid('param');
    const visibility = nodeVisibility(principal, deps.clock.now());
    const found = await deps.store.getNode(id, visibility);
    if (!found) throw new NotFoundError('node', id);
    if (!canSetNodeOwner(principal)) throw new ForbiddenError("only an operator (admin) can change a node's owner");
    const { owner } = c.req.valid('json');
    let ownerId: string | null = null;
    if (owner !== null) {
      const project = await deps.store.findProject(owner);
      if (!project) {
        throw new InvalidRequestError(`owner: no project has the id or name ${JSON.stringify(owner)}`, {
          details: { field: 'owner' },
        });
      }
      ownerId = project.id;
    }
    await deps.driver.updateNode(found.id, { owner: ownerId });
    await deps.inventory.refreshNode(found.id);
    c.get('log').info({ node: found.id, owner: ownerId }, 'node owner set');
    const node = await deps.store.getNode(found.id, visibility);
    if (!node) throw new NotFoundError('node', id);
    return c.json(nodeJson(node), 200);
  });

  return router;
}
