import { createRoute, z } from '@hono/zod-openapi';
import { parseDuration } from '../../domain/duration.js';
import { ForbiddenError, NotFoundError } from '../../domain/errors.js';
import type { Project } from '../../domain/identity.js';
import { MAX_NOTICE_OFFSETS, normalizeOffsets } from '../../domain/notices.js';
import { canCreateProject, canDeleteProject, canSeeProject, canSetNoticeOffsets, canUpdateProject, isAdmin } from '../../domain/policy.js';
import type { ProjectPatch } from '../../store/store.js';
import { createRouter, type ApiDeps } from '../context.js';
import { managedByKeystone } from '../keystone-managed.js';
import { NextLink, PageQuery, nextLink } from '../pagination.js';
import { DurationInput, IdParam, IdPrefix, ProjectSchema, errorResponses, jsonBody, jsonResponse, safeText } from '../schemas.js';
import { projectJson } from '../serializers.js';

const Name = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-", starting with a letter or digit');

/** More nodes than any one installation has; a bigger number is a typo (and overflowed the column: a 500). */
const MAX_QUOTA_NODES = 1_000_000;

const Description = safeText().optional();

const QuotaPatch = z
  .object({
    max_nodes: z.number().int().min(0).max(MAX_QUOTA_NODES).nullable().optional(),
    max_node_hours: z
      .number()
      .int()
      .min(0)
      .max(MAX_QUOTA_NODES * 744)
      .nullable()
      .optional()
      .openapi({ description: 'Node-hours booked per calendar month (UTC), checked at create and extend; null removes the limit.' }),
    max_lease_duration: DurationInput.nullable()
      .optional()
      .openapi({ description: 'ISO 8601 ("P5D") or short ("5d"), at most P3653D (10 years); null removes the limit.' }),
  })
  .strict();

const createProject = createRoute({
  method: 'post',
  path: '/v1/projects',
  tags: ['identity'],
  summary: 'Create a project (operator)',
  request: { body: jsonBody(z.object({ name: Name, description: Description }).strict()) },
  responses: { 201: jsonResponse(ProjectSchema, 'The new project'), ...errorResponses(400, 401, 403, 409) },
});

const listProjects = createRoute({
  method: 'get',
  path: '/v1/projects',
  tags: ['identity'],
  summary: 'List projects (all for the operator, your own otherwise)',
  request: { query: z.object({ ...PageQuery, id_prefix: IdPrefix.optional() }) },
  responses: {
    200: jsonResponse(z.object({ projects: z.array(ProjectSchema), next: NextLink }), 'A page of projects'),
    ...errorResponses(400, 401),
  },
});

const getProject = createRoute({
  method: 'get',
  path: '/v1/projects/{id}',
  tags: ['identity'],
  summary: 'Show a project by id or name',
  request: { params: IdParam },
  responses: { 200: jsonResponse(ProjectSchema, 'The project'), ...errorResponses(401, 404) },
});

const updateProject = createRoute({
  method: 'patch',
  path: '/v1/projects/{id}',
  tags: ['identity'],
  summary: 'Rename a project or set its quota (operator), or its notice offsets (operator or its manager)',
  request: {
    params: IdParam,
    body: jsonBody(
      z
        .object({
          name: Name.optional(),
          description: Description,
          quota: QuotaPatch.optional(),
          notice_offsets: z
            .array(DurationInput)
            .max(MAX_NOTICE_OFFSETS)
            .nullable()
            .optional()
            .openapi({
              description:
                "How long before a lease's end the project hears `lease.ending_soon` ([\"P1D\", \"PT1H\"]; [] for none); null: the operator's " +
                "default. The project's own manager may set this one field.",
            }),
        })
        .strict(),
    ),
  },
  responses: { 200: jsonResponse(ProjectSchema, 'The updated project'), ...errorResponses(400, 401, 403, 404, 409) },
});

const deleteProject = createRoute({
  method: 'delete',
  path: '/v1/projects/{id}',
  tags: ['identity'],
  summary: 'Delete a project that has no users, leases, offers or nodes (operator)',
  description:
    '409 conflict while the project has users, owns nodes, or has ever had a lease or an offer (kept for the audit ' +
    'trail): the message says which and what to do, error.details counts them ({users, leases, offers, nodes}).',
  request: { params: IdParam },
  responses: { 204: { description: 'Deleted' }, ...errorResponses(401, 403, 404, 409) },
});

export function projectRoutes(deps: ApiDeps) {
  const router = createRouter();

  /** Finds a project the caller may see; 404 otherwise (no leak that it exists). */
  async function visibleProject(principal: Parameters<typeof canSeeProject>[0], idOrName: string): Promise<Project> {
    const project = await deps.store.findProject(idOrName);
    if (!project || !canSeeProject(principal, project.id)) throw new NotFoundError('project', idOrName);
    return project;
  }

  router.openapi(createProject, async (c) => {
    const principal = c.get('principal');
    if (!canCreateProject(principal)) throw new ForbiddenError('only an operator (admin) can create projects');
    // Keystone's projects get their row here the first time one of their tokens is seen.
    if (deps.identity.kind === 'keystone') throw managedByKeystone('projects');
    const body = c.req.valid('json');
    const project = await deps.store.createProject(body, deps.clock.now());
    c.get('log').info({ project: project.id, name: project.name }, 'project created');
    return c.json(projectJson(project), 201);
  });

  router.openapi(listProjects, async (c) => {
    const principal = c.get('principal');
    const { limit, marker, id_prefix } = c.req.valid('query');
    const filter = { ...(isAdmin(principal) ? {} : { ids: principal.projectId ? [principal.projectId] : [] }), id_prefix };
    const page = await deps.store.listProjects(filter, { limit, marker });
    return c.json({ projects: page.items.map(projectJson), next: nextLink(c.req.url, page) }, 200);
  });

  router.openapi(getProject, async (c) => {
    const project = await visibleProject(c.get('principal'), c.req.valid('param').id);
    return c.json(projectJson(project), 200);
  });

  router.openapi(updateProject, async (c) => {
    const principal = c.get('principal');
    const project = await visibleProject(principal, c.req.valid('param').id);
    const body = c.req.valid('json');
    const onlyNotices = body.name === undefined && body.description === undefined && body.quota === undefined && body.notice_offsets !== undefined;
    if (!canUpdateProject(principal) && !(onlyNotices && canSetNoticeOffsets(principal, project.id))) {
      throw new ForbiddenError("only an operator (admin) can change projects and quotas; a project's manager may set its notice_offsets");
    }
    if (deps.identity.kind === 'keystone' && body.name !== undefined && body.name !== project.name) throw managedByKeystone("projects' names");
    const patch: ProjectPatch = {
      name: body.name,
      description: body.description,
      quota: body.quota === undefined ? undefined : mergeQuota(project, body.quota),
      notice_offsets_ms:
        body.notice_offsets === undefined || body.notice_offsets === null
          ? body.notice_offsets
          : normalizeOffsets(body.notice_offsets.map((d, i) => parseDuration(d, `notice_offsets[${i}]`))),
    };
    const updated = await deps.store.updateProject(project.id, patch, deps.clock.now());
    c.get('log').info({ project: project.id, patch: body }, 'project updated');
    return c.json(projectJson(updated), 200);
  });

  router.openapi(deleteProject, async (c) => {
    const principal = c.get('principal');
    const project = await visibleProject(principal, c.req.valid('param').id);
    if (!canDeleteProject(principal)) throw new ForbiddenError('only an operator (admin) can delete projects');
    await deps.store.deleteProject(project.id);
    c.get('log').info({ project: project.id, name: project.name }, 'project deleted');
    return c.body(null, 204);
  });

  return router;
}

/** A quota patch changes only the keys it names; null removes a limit. */
function mergeQuota(project: Project, patch: z.infer<typeof QuotaPatch>): Project['quota'] {
  return {
    max_nodes: patch.max_nodes === undefined ? (project.quota.max_nodes ?? null) : patch.max_nodes,
    max_node_hours: patch.max_node_hours === undefined ? (project.quota.max_node_hours ?? null) : patch.max_node_hours,
    max_lease_duration_ms:
      patch.max_lease_duration === undefined
        ? (project.quota.max_lease_duration_ms ?? null)
        : patch.max_lease_duration === null
          ? null
          : parseDuration(patch.max_lease_duration, 'quota.max_lease_duration'),
  };
}
