import { createRoute, z } from '@hono/zod-openapi';
import { networkActor, requireNetworks } from '../../access/network-actor.js';
import { nodeForCaller } from '../../access/node-access.js';
import { bindingOf } from '../../domain/networks.js';
import { isAdmin } from '../../domain/policy.js';
import { createRouter, type ApiDeps } from '../context.js';
import { AttachBody, AttachmentSchema, NetworkSchema, NodeNetworksSchema, TaggedBody, toAttachmentJson, toNetworkJson, toNodeNetworksJson } from '../network-schemas.js';
import { IdOrName, IdParam, errorResponses, jsonBody, jsonResponse } from '../schemas.js';

const AttachmentParams = z.object({
  id: IdOrName.openapi({ param: { name: 'id', in: 'path' } }),
  attachment: IdOrName.openapi({ param: { name: 'attachment', in: 'path' }, description: 'An attachment id, its port id, or its network id or name.' }),
});

const NOT_CONFIGURED = '409 not_configured: this deployment has no network service (Neutron, or the demo\'s simulated networks).';

const list = createRoute({
  method: 'get',
  path: '/v1/networks',
  tags: ['networks'],
  summary: 'The networks the caller may attach to nodes',
  description: `Its project's networks, the shared ones and those shared with it (every network for the operator), with their VLAN ids. ${NOT_CONFIGURED}`,
  responses: { 200: jsonResponse(z.object({ networks: z.array(NetworkSchema) }), 'Networks'), ...errorResponses(401, 409, 503) },
});

const nodeNetworks = createRoute({
  method: 'get',
  path: '/v1/nodes/{id}/networks',
  tags: ['networks'],
  summary: "A node's NICs and the networks attached to them",
  description:
    'Per NIC (Ironic port): MAC, physical network, and what is plugged in — network, Neutron port, VLAN, binding. For the ' +
    `operator, the node's owner, and a lessee while its lease is active (another project's attachment shows only as in use). ${NOT_CONFIGURED}`,
  request: { params: IdParam },
  responses: { 200: jsonResponse(NodeNetworksSchema, "The node's NICs"), ...errorResponses(401, 403, 404, 409, 503) },
});

const attach = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/networks',
  tags: ['networks'],
  summary: 'Attach a network to a node',
  description:
    "Creates a Neutron port in the caller's project on the network (or plugs the caller's own `port`) and attaches it to a free NIC " +
    '(or the one with `mac`) as an Ironic VIF; with `tagged`, a trunk carries those networks on their VLANs. A network or port the ' +
    'caller may not use is a 404. A failure removes whatever the attach created. Every attachment of a lessee is removed at its lease end, ' +
    `before cleaning. ${NOT_CONFIGURED}`,
  request: { params: IdParam, body: jsonBody(AttachBody) },
  responses: { 201: jsonResponse(AttachmentSchema, 'Attached'), ...errorResponses(400, 401, 403, 404, 409, 503) },
});

const detach = createRoute({
  method: 'delete',
  path: '/v1/nodes/{id}/networks/{attachment}',
  tags: ['networks'],
  summary: 'Detach a network from a node',
  description: `Unplugs the VIF; deletes the port (and trunk) if Leasehold created them. ${NOT_CONFIGURED}`,
  request: { params: AttachmentParams },
  responses: { 200: jsonResponse(AttachmentSchema, 'Detached'), ...errorResponses(400, 401, 403, 404, 409, 503) },
});

const addTagged = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/networks/{attachment}/tagged',
  tags: ['networks'],
  summary: "Add tagged networks to an attachment's trunk",
  request: { params: AttachmentParams, body: jsonBody(TaggedBody) },
  responses: { 200: jsonResponse(AttachmentSchema, 'Tagged'), ...errorResponses(400, 401, 403, 404, 409, 503) },
});

const removeTagged = createRoute({
  method: 'delete',
  path: '/v1/nodes/{id}/networks/{attachment}/tagged/{network}',
  tags: ['networks'],
  summary: "Remove a tagged network from an attachment's trunk",
  request: { params: AttachmentParams.extend({ network: IdOrName.openapi({ param: { name: 'network', in: 'path' } }) }) },
  responses: { 200: jsonResponse(AttachmentSchema, 'Untagged'), ...errorResponses(400, 401, 403, 404, 409, 503) },
});

/** Tenant networks: the REST face of networking/network-service.ts, behind the node policy's VIF rules. */
export function networkRoutes(deps: ApiDeps) {
  const router = createRouter();

  router.openapi(list, async (c) => {
    const service = requireNetworks(deps);
    const principal = c.get('principal');
    const networks = await service.listNetworks({ project_id: principal.projectId, admin: isAdmin(principal) });
    return c.json({ networks: [...networks].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id)).map(toNetworkJson) }, 200);
  });

  router.openapi(nodeNetworks, async (c) => {
    const service = requireNetworks(deps);
    const ident = c.req.valid('param').id;
    const found = await nodeForCaller(deps, c.get('principal'), ident);
    const actor = networkActor(deps, c.get('principal'), ident, found, 'baremetal:node:vif:list');
    const nics = await service.nodeNetworks({ node_id: found.node.id, project_id: actor.project_id, admin: actor.admin, owner: actor.owner });
    return c.json(toNodeNetworksJson(found.node.id, nics), 200);
  });

  router.openapi(attach, async (c) => {
    const service = requireNetworks(deps);
    const ident = c.req.valid('param').id;
    const found = await nodeForCaller(deps, c.get('principal'), ident);
    const actor = networkActor(deps, c.get('principal'), ident, found, 'baremetal:node:vif:attach');
    const attached = await service.attach(actor, c.req.valid('json'));
    const port = attached.port_id ? await service.backend.getPort(attached.port_id) : null;
    return c.json(toAttachmentJson(attached, { binding: port ? bindingOf(port) : null, port_status: port?.status ?? null }), 201);
  });

  router.openapi(detach, async (c) => {
    const service = requireNetworks(deps);
    const { id: ident, attachment } = c.req.valid('param');
    const found = await nodeForCaller(deps, c.get('principal'), ident);
    const actor = networkActor(deps, c.get('principal'), ident, found, 'baremetal:node:vif:detach');
    return c.json(toAttachmentJson(await service.detach(actor, attachment)), 200);
  });

  router.openapi(addTagged, async (c) => {
    const service = requireNetworks(deps);
    const { id: ident, attachment } = c.req.valid('param');
    const found = await nodeForCaller(deps, c.get('principal'), ident);
    const actor = networkActor(deps, c.get('principal'), ident, found, 'baremetal:node:vif:attach');
    return c.json(toAttachmentJson(await service.addTagged(actor, attachment, c.req.valid('json').networks)), 200);
  });

  router.openapi(removeTagged, async (c) => {
    const service = requireNetworks(deps);
    const { id: ident, attachment, network } = c.req.valid('param');
    const found = await nodeForCaller(deps, c.get('principal'), ident);
    const actor = networkActor(deps, c.get('principal'), ident, found, 'baremetal:node:vif:detach');
    return c.json(toAttachmentJson(await service.removeTagged(actor, attachment, network)), 200);
  });

  return router;
}
