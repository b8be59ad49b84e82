import { createRoute, z } from '@hono/zod-openapi';
import { NIL_UUID } from '../../domain/ids.js';
import { ForbiddenError, InvalidRequestError, NotFoundError } from '../../domain/errors.js';
import { Role } from '../../domain/identity.js';
import { canCreateUser, canDeleteUser, canSeeProject, isAdmin } from '../../domain/policy.js';
import { createRouter, type ApiDeps } from '../context.js';
import { localIdentityOnly } from '../keystone-managed.js';
import { visibleUser } from '../lookups.js';
import { NextLink, PageQuery, nextLink } from '../pagination.js';
import { IdOrName, IdParam, IdPrefix, RoleSchema, UserSchema, errorResponses, jsonBody, jsonResponse } from '../schemas.js';
import { projectNamesOf } from '../project-names.js';
import { userJson } from '../serializers.js';
import type { User } from '../../domain/identity.js';

const NewUser = z
  .object({
    name: z
      .string()
      .trim()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]*$/, 'letters, digits, ".", "_", "@" and "-", starting with a letter or digit'),
    project_id: IdOrName.nullable()
      .optional()
      .openapi({ description: 'Project id or name; omit (or null) only for role admin.' }),
    role: RoleSchema,
  })
  .strict();

const createUser = createRoute({
  method: 'post',
  path: '/v1/users',
  tags: ['identity'],
  summary: "Create a user (operator, or a project manager for its own project's users)",
  request: { body: jsonBody(NewUser) },
  responses: { 201: jsonResponse(UserSchema, 'The new user'), ...errorResponses(400, 401, 403, 404, 409) },
});

const listUsers = createRoute({
  method: 'get',
  path: '/v1/users',
  tags: ['identity'],
  summary: "List users (all for the operator, your project's otherwise)",
  request: {
    query: z.object({
      ...PageQuery,
      project_id: IdOrName.optional(),
      name: IdOrName.optional().openapi({ description: 'Only the user of this name (user names are unique).' }),
      id_prefix: IdPrefix.optional(),
    }),
  },
  responses: {
    200: jsonResponse(z.object({ users: z.array(UserSchema), next: NextLink }), 'A page of users'),
    ...errorResponses(400, 401),
  },
});

const getUser = createRoute({
  method: 'get',
  path: '/v1/users/{id}',
  tags: ['identity'],
  summary: 'Show a user',
  request: { params: IdParam },
  responses: { 200: jsonResponse(UserSchema, 'The user'), ...errorResponses(401, 404) },
});

const deleteUser = createRoute({
  method: 'delete',
  path: '/v1/users/{id}',
  tags: ['identity'],
  summary: "Delete a user and its tokens (operator, or a project manager for its own project's users)",
  description:
    'Its API and console tokens stop working at once. The leases and offers it created stay (their project owns ' +
    'them); the audit log keeps its name. Nobody deletes the user it is signed in as (403).',
  request: { params: IdParam },
  responses: { 204: { description: 'Deleted' }, ...errorResponses(401, 403, 404) },
});

const me = createRoute({
  method: 'get',
  path: '/v1/me',
  tags: ['identity'],
  summary: 'Who the token belongs to',
  responses: {
    200: jsonResponse(
      z.object({
        user: UserSchema,
        project: z.object({ id: z.string(), name: z.string() }).nullable(),
        identity: z.enum(['local', 'keystone']).openapi({ description: "Who vouched for the token: Leasehold's own users, or Keystone." }),
      }),
      'The calling user and its project',
    ),
    ...errorResponses(401),
  },
});

export function userRoutes(deps: ApiDeps) {
  const router = createRouter();
  for (const path of ['/v1/users', '/v1/users/*']) router.use(path, localIdentityOnly(deps, 'users'));


  /** A user as JSON with its project's name (one query). */
  async function named(user: User) {
    const names = await projectNamesOf(deps.store, [user.project_id]);
    return userJson(user, user.project_id === null ? null : (names.get(user.project_id) ?? null));
  }

  router.openapi(createUser, async (c) => {
    const principal = c.get('principal');
    const body = c.req.valid('json');
    let projectId: string | null = null;
    if (body.project_id != null) {
      const project = await deps.store.findProject(body.project_id);
      if (!project || !canSeeProject(principal, project.id)) {
        throw new InvalidRequestError(`project_id: no project has the id or name ${JSON.stringify(body.project_id)}`, {
          details: { field: 'project_id' },
        });
      }
      projectId = project.id;
    } else if (body.role !== Role.Admin) {
      throw new InvalidRequestError(`project_id is required for role ${body.role}`, {
        details: { field: 'project_id' },
      });
    }
    if (!canCreateUser(principal, projectId, body.role)) {
      throw new ForbiddenError(
        isAdmin(principal) || principal.role === Role.Manager
          ? `a project manager can create users of its own project with role reader, member or manager`
          : 'only an operator or a project manager can create users',
      );
    }
    const user = await deps.store.createUser({ name: body.name, project_id: projectId, role: body.role }, deps.clock.now());
    c.get('log').info({ created_user: user.id, role: user.role, project: projectId }, 'user created');
    return c.json(await named(user), 201);
  });

  router.openapi(listUsers, async (c) => {
    const principal = c.get('principal');
    const { limit, marker, project_id, name, id_prefix } = c.req.valid('query');
    let projectFilter: string | undefined;
    if (project_id !== undefined) {
      const project = await deps.store.findProject(project_id);
      if (!project || !canSeeProject(principal, project.id)) throw new NotFoundError('project', project_id);
      projectFilter = project.id;
    }
    if (!isAdmin(principal)) projectFilter = principal.projectId ?? NIL_UUID;
    const page = await deps.store.listUsers({ project_id: projectFilter, name, id_prefix }, { limit, marker });
    const names = await projectNamesOf(deps.store, page.items.map((u) => u.project_id));
    return c.json({ users: page.items.map((u) => userJson(u, u.project_id === null ? null : (names.get(u.project_id) ?? null))), next: nextLink(c.req.url, page) }, 200);
  });

  router.openapi(getUser, async (c) => {
    const user = await visibleUser(deps.store, c.get('principal'), c.req.valid('param').id);
    return c.json(await named(user), 200);
  });

  router.openapi(deleteUser, async (c) => {
    const principal = c.get('principal');
    const user = await visibleUser(deps.store, principal, c.req.valid('param').id);
    if (!canDeleteUser(principal, user)) {
      throw new ForbiddenError(
        user.id === principal.userId
          ? 'you cannot delete the user you are signed in as; another operator or your project manager can'
          : "only an operator or the user's project manager can delete it",
      );
    }
    await deps.store.deleteUser(user.id);
    c.get('log').info({ deleted_user: user.id }, 'user deleted');
    return c.body(null, 204);
  });

  router.openapi(me, async (c) => {
    const principal = c.get('principal');
    const project =
      principal.projectId && principal.projectName ? { id: principal.projectId, name: principal.projectName } : null;
    if (principal.source === 'keystone') {
      // A Keystone user has no row here: what its token says, as of this request.
      const user = { id: principal.userId, name: principal.userName, project_id: principal.projectId, project_name: principal.projectName ?? null, role: principal.role, created_at: null };
      return c.json({ user, project, identity: 'keystone' as const }, 200);
    }
    const user = await visibleUser(deps.store, principal, principal.userId);
    return c.json({ user: userJson(user, principal.projectName ?? null), project, identity: 'local' as const }, 200);
  });

  return router;
}
