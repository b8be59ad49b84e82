import { createRoute, z } from '@hono/zod-openapi';
import { formatDuration } from '../../domain/duration.js';
import { NotFoundError } from '../../domain/errors.js';
import { FINISHED_LEASE_STATES } from '../../domain/leasing.js';
import { isAdmin } from '../../domain/policy.js';
import { createRouter, type ApiDeps } from '../context.js';
import { AutoRenewOut, autoRenewJson } from '../extension-schemas.js';
import { IdParam, errorResponses, jsonResponse } from '../schemas.js';

const RULES = ['extension_window', 'extension_max_ahead', 'max_total_length', 'max_lease_length', 'offer_end', 'offer_window', 'next_booking', 'project_max_lease_duration'] as const;

const ExtensionQuote = z
  .object({
    lease_id: z.string(),
    end: z.string().openapi({ description: "The lease's end now." }),
    extendable: z.boolean().openapi({ description: 'Whether PATCH {end} later than `end` would be accepted now (by these rules; the quota on nodes is checked then).' }),
    latest_end: z.string().nullable().openapi({ description: 'The latest end a PATCH may ask for now; null when nothing bounds it.' }),
    max_extension: z.string().nullable().openapi({ description: 'latest_end − end (ISO 8601); null when unbounded.' }),
    limited_by: z
      .object({
        rule: z.enum(RULES),
        node_id: z.string().nullable().openapi({ description: 'The node whose offer or next booking sets the limit (null: the project quota).' }),
        node_name: z.string().nullable(),
      })
      .nullable()
      .openapi({ description: 'What sets latest_end (the most limiting node), or null when nothing does.' }),
    window: z
      .object({
        open: z.boolean().openapi({ description: "Whether the offers' extension windows are open now (true when no offer has one)." }),
        opens_at: z.string().nullable().openapi({ description: 'When the window opens, while it is closed.' }),
      })
      .openapi({ description: "The offers' extension window (extension_window)." }),
    auto_renew: AutoRenewOut.nullable(),
  })
  .openapi('ExtensionQuote');

const getExtension = createRoute({
  method: 'get',
  path: '/v1/leases/{id}/extension',
  tags: ['leases'],
  summary: 'How far this lease could be extended now, and which rule or booking limits it',
  description:
    'The rules of its nodes\' offers (extension_window, extension_max_ahead, max_total_length, max_lease_length, offer_end, offer_window), the next ' +
    "lease booked on each node (next_booking) and the project's quota (project_max_lease_duration). Changes nothing. A lease that " +
    'is over is not extendable.',
  request: { params: IdParam },
  responses: { 200: jsonResponse(ExtensionQuote, 'The extension quote'), ...errorResponses(401, 404) },
});

/** GET /v1/leases/{id}/extension: what the lessee (or the operator) may extend the lease to (issue 16, item 4). */
export function leaseExtensionRoutes(deps: ApiDeps) {
  const router = createRouter();
  router.openapi(getExtension, async (c) => {
    const principal = c.get('principal');
    const id = c.req.valid('param').id;
    const lease = await deps.store.leasing.getLease(id);
    // The lessee's question: its project and the operator see it; anyone else is told there is no such lease.
    if (!lease || !(isAdmin(principal) || lease.project_id === principal.projectId)) throw new NotFoundError('lease', id);
    const project = await deps.store.findProject(lease.project_id);
    if (!project) throw new NotFoundError('lease', id);
    const over = (FINISHED_LEASE_STATES as readonly string[]).includes(lease.state) || lease.state === 'ending';
    const { limit } = over ? { limit: null } : await deps.leasing.extensionLimit(project, lease);
    const end = lease.end.getTime();
    const latest = limit === null ? end : limit.latest;
    const names = limit?.node_id ? await deps.store.nodeNames([limit.node_id]) : new Map<string, string | null>();
    return c.json(
      {
        lease_id: lease.id,
        end: lease.end.toISOString(),
        extendable: !over && latest > end,
        latest_end: Number.isFinite(latest) ? new Date(latest).toISOString() : null,
        max_extension: Number.isFinite(latest) ? formatDuration(Math.max(0, latest - end)) : null,
        limited_by: limit?.rule ? { rule: limit.rule, node_id: limit.node_id, node_name: limit.node_id ? (names.get(limit.node_id) ?? null) : null } : null,
        window: {
          open: limit?.window_open ?? false,
          opens_at: limit?.window_opens_at == null ? null : new Date(limit.window_opens_at).toISOString(),
        },
        auto_renew: autoRenewJson(lease.auto_renew),
      },
      200,
    );
  });
  return router;
}
