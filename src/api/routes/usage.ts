import { createRoute, z } from '@hono/zod-openapi';
import { formatDuration } from '../../domain/duration.js';
import { InvalidRequestError } from '../../domain/errors.js';
import type { Principal } from '../../domain/identity.js';
import { isAdmin } from '../../domain/policy.js';
import { isAcceptedInstant } from '../../domain/time-bounds.js';
import { MAX_USAGE_WINDOW_MS, USAGE_GROUPS, summarizeUsage, usageCsv, usagePerDay, type UsageGroupBy } from '../../domain/usage.js';
import type { UsageFilter } from '../../store/usage-store.js';
import { createRouter, type ApiDeps } from '../context.js';
import { IdOrName, TimeInput, errorResponses } from '../schemas.js';

const Timestamp = z.string().openapi({ format: 'date-time', example: '2030-01-01T00:00:00.000Z' });

const ChargeSchema = z.object({ currency: z.string().openapi({ example: 'EUR' }), amount: z.string().openapi({ example: '12.50' }) }).openapi('UsageCharge');

const UsageGroupSchema = z
  .object({
    key: z.string().nullable().openapi({ description: 'The project id, owner project id, resource class or node id; null: none (an unowned node, no class).' }),
    name: z.string().nullable(),
    node_hours: z.number().openapi({ description: 'Node-hours of actual use inside the window (6 decimals).' }),
    node_seconds: z.number().openapi({ description: 'The same in seconds, exact to the millisecond.' }),
    allocations: z.number().int().openapi({ description: 'Allocations (one node of one lease) with use inside the window.' }),
    charges: z.array(ChargeSchema).openapi({ description: 'Per currency, from the price of the offer each allocation was booked under; never summed across currencies.' }),
  })
  .openapi('UsageGroup');

const UsageSchema = z
  .object({
    from: Timestamp,
    to: Timestamp,
    as_of: Timestamp.openapi({ description: "The server's clock: use after it has not happened yet." }),
    group_by: z.enum(USAGE_GROUPS),
    groups: z.array(UsageGroupSchema).openapi({ description: 'Most used first.' }),
    total: UsageGroupSchema,
    days: z
      .array(z.object({ date: z.string().openapi({ example: '2030-01-31' }), node_hours: z.record(z.string(), z.number()) }))
      .openapi({ description: "Every UTC day of the window with its node-hours per group key ('' for none): the chart." }),
  })
  .openapi('Usage');

const getUsage = createRoute({
  method: 'get',
  path: '/v1/usage',
  tags: ['leases'],
  summary: 'Node-hours of actual use over [from, to), grouped',
  description:
    'Actual use: from the instant a lessee got access to a node (its allocation\'s start, or later when the previous ' +
    'lease\'s cleaning overran) to the instant access ended (the end as cut by an early end, a return, a replacement or ' +
    'a reclaim; an extension moves it), clipped to the window and to now. A project sees its own use, and with ' +
    '`owner=<its project>` the use of its nodes; the operator sees everything. At most 366 days. `Accept: text/csv` or ' +
    '`format=csv` answers CSV (one line per group and currency).',
  request: {
    query: z.object({
      from: TimeInput.optional().openapi({ description: 'Default: the start of the current calendar month (UTC).' }),
      to: TimeInput.optional().openapi({ description: 'After from, at most 366 days later. Default: the start of the month after from.' }),
      group_by: z.enum(USAGE_GROUPS).optional().openapi({ description: 'Default: project.' }),
      project: IdOrName.optional().openapi({ description: 'Only this lessee project (the operator; a project may name only itself, or any lessee with owner=itself).' }),
      owner: IdOrName.optional().openapi({ description: "Only use of the nodes this project owned when they were leased (a project may name only itself)." }),
      format: z.enum(['json', 'csv']).optional(),
    }),
  },
  responses: {
    200: {
      description: 'Usage',
      content: { 'application/json': { schema: UsageSchema }, 'text/csv': { schema: z.string() } },
    },
    ...errorResponses(400, 401),
  },
});

/** An id no project has: a filter the caller may not use matches nothing (as if that project had no use). */
const NOBODY = '00000000-0000-0000-0000-000000000000';

export function usageRoutes(deps: ApiDeps) {
  const router = createRouter();

  async function projectId(idOrName: string): Promise<string> {
    return (await deps.store.findProject(idOrName))?.id ?? NOBODY;
  }

  /** The lessee and owner filters the caller may have (src/domain/policy.ts: a project sees its own, as a lessee or owner). */
  async function scope(principal: Principal, q: { project?: string; owner?: string }): Promise<Pick<UsageFilter, 'lessee_project_id' | 'owner_project_id'>> {
    const lessee = q.project === undefined ? undefined : await projectId(q.project);
    const owner = q.owner === undefined ? undefined : await projectId(q.owner);
    if (isAdmin(principal)) return { lessee_project_id: lessee, owner_project_id: owner };
    const own = principal.projectId ?? NOBODY;
    if (owner !== undefined) return { owner_project_id: owner === own ? own : NOBODY, lessee_project_id: lessee };
    return { lessee_project_id: lessee === undefined || lessee === own ? own : NOBODY };
  }

  router.openapi(getUsage, async (c) => {
    const q = c.req.valid('query');
    const now = deps.clock.now();
    const month = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const from = q.from === undefined ? month : Date.parse(q.from);
    const fromDate = new Date(from);
    const to = q.to === undefined ? Date.UTC(fromDate.getUTCFullYear(), fromDate.getUTCMonth() + 1, 1) : Date.parse(q.to);
    if (to <= from) throw new InvalidRequestError('to must be after from', { details: { field: 'to' } });
    if (!isAcceptedInstant(to)) {
      // from=9999-12-15 and the default month would end in year 10000, which no timestamp column can be asked about.
      throw new InvalidRequestError(`the window from ${fromDate.toISOString()} ends after 9999-12-31; give an earlier from or a to`, {
        details: { field: q.to === undefined ? 'from' : 'to' },
      });
    }
    if (to - from > MAX_USAGE_WINDOW_MS) {
      throw new InvalidRequestError(`the window from ${fromDate.toISOString()} to ${new Date(to).toISOString()} is longer than 366 days; ask for less`, {
        details: { field: 'to', max_window: formatDuration(MAX_USAGE_WINDOW_MS) },
      });
    }
    const by: UsageGroupBy = q.group_by ?? 'project';
    const filter: UsageFilter = { from: fromDate, to: new Date(to), ...(await scope(c.get('principal'), q)) };
    const spans = await deps.store.usage.spans(filter, now);
    const window = { start: from, end: to };
    const { groups, total } = summarizeUsage(spans, window, by);
    const csv = q.format === 'csv' || (q.format === undefined && (c.req.header('accept') ?? '').includes('text/csv'));
    if (csv) {
      c.header('Content-Type', 'text/csv; charset=utf-8');
      return c.body(usageCsv(by, groups), 200) as never;
    }
    return c.json(
      {
        from: fromDate.toISOString(),
        to: new Date(to).toISOString(),
        as_of: now.toISOString(),
        group_by: by,
        groups: [...groups],
        total,
        days: usagePerDay(spans, window, by),
      },
      200,
    );
  });

  return router;
}
