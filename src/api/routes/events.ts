import { createRoute, z } from '@hono/zod-openapi';
import { NIL_UUID } from '../../domain/ids.js';
import { isAdmin } from '../../domain/policy.js';
import { createRouter, type ApiDeps } from '../context.js';
import { NextLink, PageQuery, nextLink } from '../pagination.js';
import { IdOrName, TimeInput, errorResponses, jsonResponse, safeName } from '../schemas.js';
import { idsMentioned } from '../../domain/event-text.js';
import { projectNamesOf } from '../project-names.js';
import { eventJson } from '../serializers.js';

const Time = TimeInput;

export const EventSchema = z
  .object({
    seq: z.string(),
    at: z.string(),
    type: z.string().openapi({ example: 'allocation.released' }),
    outcome: z.enum(['ok', 'error']),
    actor: z.string().openapi({ description: 'A user name, or "engine".' }),
    node_id: z.string().nullable(),
    lease_id: z.string().nullable(),
    offer_id: z.string().nullable(),
    project_id: z.string().nullable(),
    node_name: z.string().nullable().openapi({ description: 'The name of node_id (null when it has none).' }),
    project_name: z.string().nullable().openapi({ description: 'The name of project_id (null when it has no row).' }),
    message: z.string().openapi({ description: 'As recorded, with ids.' }),
    display_message: z.string().openapi({ description: 'The message as people read it: the node and project ids it names replaced by their names.' }),
    details: z.record(z.string(), z.unknown()),
  })
  .openapi('Event');

const listEvents = createRoute({
  method: 'get',
  path: '/v1/events',
  tags: ['events'],
  summary: 'The audit log, newest first: every lease and offer change, node action and engine step',
  description: 'The operator sees everything; a project sees the events about its leases and its nodes.',
  request: {
    query: z.object({
      ...PageQuery,
      // The events' marker is the last seq seen (a bigint): 18 digits at most, so it never overflows the column.
      marker: z
        .string()
        .regex(/^\d{1,18}$/, 'the seq of the last event of the previous page')
        .optional()
        .openapi({ description: 'The seq of the last event of the previous page.' }),
      node_id: IdOrName.optional(),
      lease_id: IdOrName.optional(),
      project: IdOrName.optional(),
      type: safeName().optional().openapi({ description: 'A type ("lease.created") or a prefix ("lease").' }),
      since: Time.optional(),
      until: Time.optional(),
    }),
  },
  responses: { 200: jsonResponse(z.object({ events: z.array(EventSchema), next: NextLink }), 'A page of events'), ...errorResponses(400, 401) },
});

export function eventRoutes(deps: ApiDeps) {
  const router = createRouter();
  router.openapi(listEvents, async (c) => {
    const principal = c.get('principal');
    const q = c.req.valid('query');
    let projectId: string | undefined;
    if (q.project !== undefined) projectId = (await deps.store.findProject(q.project))?.id ?? NIL_UUID;
    let nodeId = q.node_id;
    if (nodeId !== undefined) nodeId = (await deps.store.getNode(nodeId, { kind: 'all' }))?.id ?? nodeId;
    const page = await deps.store.leasing.listEvents(
      {
        node_id: nodeId,
        lease_id: q.lease_id,
        project_id: projectId,
        type: q.type,
        since: q.since ? new Date(q.since) : undefined,
        until: q.until ? new Date(q.until) : undefined,
        visible_to: isAdmin(principal) ? undefined : (principal.projectId ?? NIL_UUID),
      },
      { limit: q.limit, marker: q.marker },
    );
    // The names of every node and project the page mentions: one query for each kind, never one per event.
    const ids = idsMentioned(page.items);
    const [nodes, projects] = await Promise.all([deps.store.nodeNames(ids), projectNamesOf(deps.store, ids)]);
    const names = new Map<string, string | null>([...nodes, ...projects]);
    return c.json({ events: page.items.map((e) => eventJson(e, names)), next: nextLink(c.req.url, page) }, 200);
  });
  return router;
}
