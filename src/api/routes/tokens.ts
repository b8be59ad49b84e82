import { createRoute, z } from '@hono/zod-openapi';
import { ForbiddenError, InvalidRequestError, NotFoundError } from '../../domain/errors.js';
import { isUuid } from '../../domain/ids.js';
import { Role, roleAtLeast, type ApiToken, type Principal } from '../../domain/identity.js';
import { canManageTokensOf, isAdmin } from '../../domain/policy.js';
import { checkWithinHorizon } from '../../domain/time-bounds.js';
import { issueToken } from '../../domain/tokens.js';
import { createRouter, type ApiDeps } from '../context.js';
import { localIdentityOnly } from '../keystone-managed.js';
import { visibleUser } from '../lookups.js';
import { NextLink, PageQuery, nextLink } from '../pagination.js';
import { IdOrName, IdParam, IdPrefix, NewTokenSchema, TimeInput, TokenSchema, errorResponses, jsonBody, jsonResponse, safeText } from '../schemas.js';
import { tokenJson } from '../serializers.js';

const NewToken = z
  .object({
    user_id: IdOrName,
    description: safeText(200).optional(),
    expires_at: TimeInput.optional().openapi({
      description: 'RFC 3339; in the future, at most 10 years from now. Omit for a token that does not expire.',
    }),
  })
  .strict();

const createToken = createRoute({
  method: 'post',
  path: '/v1/tokens',
  tags: ['identity'],
  summary: 'Issue an API token for a user (shown once)',
  description:
    "The operator issues tokens for anyone; a project manager for its project's users; any user for itself.",
  request: { body: jsonBody(NewToken) },
  responses: { 201: jsonResponse(NewTokenSchema, 'The token, with its secret value'), ...errorResponses(400, 401, 403, 404) },
});

const listTokens = createRoute({
  method: 'get',
  path: '/v1/tokens',
  tags: ['identity'],
  summary: 'List tokens you may manage (values are never shown again)',
  request: { query: z.object({ ...PageQuery, user_id: IdOrName.optional(), id_prefix: IdPrefix.optional() }) },
  responses: {
    200: jsonResponse(z.object({ tokens: z.array(TokenSchema), next: NextLink }), 'A page of tokens'),
    ...errorResponses(400, 401, 404),
  },
});

const getToken = createRoute({
  method: 'get',
  path: '/v1/tokens/{id}',
  tags: ['identity'],
  summary: 'Show a token (without its value)',
  request: { params: IdParam },
  responses: { 200: jsonResponse(TokenSchema, 'The token'), ...errorResponses(401, 404) },
});

const revokeToken = createRoute({
  method: 'delete',
  path: '/v1/tokens/{id}',
  tags: ['identity'],
  summary: 'Revoke a token (effective at once)',
  request: { params: IdParam },
  responses: { 204: { description: 'Revoked' }, ...errorResponses(401, 403, 404) },
});

export function tokenRoutes(deps: ApiDeps) {
  const router = createRouter();
  for (const path of ['/v1/tokens', '/v1/tokens/*']) router.use(path, localIdentityOnly(deps, 'tokens'));


  /** A token is visible to whoever may manage its user's tokens; others get 404. */
  async function manageableToken(principal: Principal, id: string): Promise<ApiToken> {
    const token = isUuid(id) ? await deps.store.getToken(id) : null;
    const owner = token ? await deps.store.getUser(token.user_id) : null;
    if (!token || !owner || !canManageTokensOf(principal, owner)) throw new NotFoundError('token', id);
    return token;
  }

  router.openapi(createToken, async (c) => {
    const principal = c.get('principal');
    const body = c.req.valid('json');
    const user = await visibleUser(deps.store, principal, body.user_id);
    if (!canManageTokensOf(principal, user)) {
      throw new ForbiddenError("only an operator, the user's project manager or the user itself can issue its tokens");
    }
    const now = deps.clock.now();
    const expiresAt = body.expires_at === undefined ? null : new Date(body.expires_at);
    if (expiresAt && expiresAt.getTime() <= now.getTime()) {
      throw new InvalidRequestError(`expires_at ${body.expires_at} is not in the future`, {
        details: { field: 'expires_at', now: now.toISOString() },
      });
    }
    if (expiresAt) checkWithinHorizon(expiresAt, now, 'expires_at');
    const issued = issueToken();
    const token = await deps.store.createToken(
      {
        user_id: user.id,
        token_hash: issued.hash,
        prefix: issued.prefix,
        description: body.description ?? '',
        expires_at: expiresAt,
      },
      now,
    );
    c.get('log').info({ token: token.id, for_user: user.id }, 'token issued');
    return c.json({ ...tokenJson(token), token: issued.value }, 201);
  });

  router.openapi(listTokens, async (c) => {
    const principal = c.get('principal');
    const { limit, marker, user_id, id_prefix } = c.req.valid('query');
    let filter: { user_id?: string; project_id?: string; id_prefix?: string } = {};
    if (user_id !== undefined) {
      const user = await visibleUser(deps.store, principal, user_id);
      if (!canManageTokensOf(principal, user)) throw new NotFoundError('user', user_id);
      filter = { user_id: user.id };
    } else if (!isAdmin(principal)) {
      filter =
        roleAtLeast(principal.role, Role.Manager) && principal.projectId
          ? { project_id: principal.projectId }
          : { user_id: principal.userId };
    }
    const page = await deps.store.listTokens({ ...filter, id_prefix }, { limit, marker });
    return c.json({ tokens: page.items.map(tokenJson), next: nextLink(c.req.url, page) }, 200);
  });

  router.openapi(getToken, async (c) => {
    const token = await manageableToken(c.get('principal'), c.req.valid('param').id);
    return c.json(tokenJson(token), 200);
  });

  router.openapi(revokeToken, async (c) => {
    const token = await manageableToken(c.get('principal'), c.req.valid('param').id);
    await deps.store.revokeToken(token.id, deps.clock.now());
    c.get('log').info({ token: token.id }, 'token revoked');
    return c.body(null, 204);
  });

  return router;
}
