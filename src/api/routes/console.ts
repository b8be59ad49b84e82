import { createRoute, z } from '@hono/zod-openapi';
import { NotFoundError, UpgradeRequiredError } from '../../domain/errors.js';
import { localUserId, snapshotOf, type Principal } from '../../domain/identity.js';
import { canManageOwnedNode, isAdmin, nodeAccess, nodeVisibility } from '../../domain/policy.js';
import { consoleAccess } from '../../console/console-access.js';
import { consoleUrl, issueConsoleToken } from '../../console/console-token.js';
import type { ConsoleToken } from '../../store/console-store.js';
import { createRouter, type ApiDeps } from '../context.js';
import { IdParam, errorResponses, jsonResponse } from '../schemas.js';

/** LEASEHOLD_CONSOLE_TOKEN_TTL's default. */
export const DEFAULT_CONSOLE_TOKEN_TTL_MS = 10 * 60_000;

const Timestamp = z.string().openapi({ format: 'date-time', example: '2030-01-01T00:00:00.000Z' });

const ConsoleSchema = z
  .object({
    id: z.string().openapi({ format: 'uuid', description: 'The console token: revoke it with DELETE /v1/consoles/{id}.' }),
    node_id: z.string(),
    user_id: z.string().openapi({ description: "Whose access the token carries: a local user's uuid, or a Keystone user's id." }),
    created_at: Timestamp,
    expires_at: Timestamp.openapi({ description: 'Connections can be opened until then; open ones are not cut by it.' }),
    revoked_at: Timestamp.nullable(),
  })
  .openapi('Console');

const NewConsoleSchema = ConsoleSchema.extend({
  url: z.string().openapi({
    description:
      'WebSocket URL (ws:// or wss://) carrying the token: shown only in this response. Binary and text frames ' +
      "carry terminal bytes; Leasehold's own notices are text frames starting with [leasehold]; close codes are " +
      'listed in the README ("Serial console").',
    example: 'wss://leasehold.example/v1/consoles/6f1c.../stream?token=lhc_...',
  }),
}).openapi('NewConsole');

const openConsole = createRoute({
  method: 'post',
  path: '/v1/nodes/{id}/console',
  tags: ['nodes'],
  summary: "Get a WebSocket URL to a node's serial console",
  description:
    'The operator, a member of the owning project, or a member of the project whose lease is active on the node ' +
    'right now (policy rule baremetal:node:get_console). Returns a URL with a short-lived token for this node only ' +
    '(LEASEHOLD_CONSOLE_TOKEN_TTL, default 10 minutes); it opens connections (at most 4 at once per URL and 32 per ' +
    'user on one server), nothing else. Access is decided again when a connection opens, at the end of the lease ' +
    'and every second while it is open: it is cut the moment the lease ends.',
  request: { params: IdParam },
  responses: { 201: jsonResponse(NewConsoleSchema, 'The console URL'), ...errorResponses(401, 403, 404, 503) },
});

const getConsole = createRoute({
  method: 'get',
  path: '/v1/consoles/{id}',
  tags: ['nodes'],
  summary: 'Show a console token (without its value)',
  description: "Its creator, the operator and members of the node's owning project see it; anyone else gets 404.",
  request: { params: IdParam },
  responses: { 200: jsonResponse(ConsoleSchema, 'The console token'), ...errorResponses(401, 404) },
});

const revokeConsole = createRoute({
  method: 'delete',
  path: '/v1/consoles/{id}',
  tags: ['nodes'],
  summary: 'Revoke a console token and close its open connections',
  description:
    "Its creator, the operator or a member of the node's owning project. Connections using it are closed with " +
    'code 4401 (at once on this server, within a second on other replicas).',
  request: { params: IdParam },
  responses: { 204: { description: 'Revoked' }, ...errorResponses(401, 404) },
});

const stream = createRoute({
  method: 'get',
  path: '/v1/consoles/{id}/stream',
  tags: ['nodes'],
  summary: 'The WebSocket endpoint of a console (connect to the url from POST /v1/nodes/{id}/console)',
  description:
    'A WebSocket (Upgrade: websocket), authenticated by the `token` query parameter, not by an API token. ' +
    "Client → server: binary or text frames, bytes for the node's serial line. Server → client: binary frames " +
    "with the node's output; text frames with Leasehold's notices. Close codes: 1000 detached, 1001 server " +
    'stopping, 4401 token unknown/expired/revoked, 4403 not allowed by the policy, 4404 node not reachable by the ' +
    "token's user, 4409 console in a state that does not allow it, 4410 access ended (lease over), 4429 too many " +
    'connections open with this token (4) or for this user (32) on this server, 4502 the ' +
    "node's console closed, 4503 console unreachable or not up in time, 1011 unexpected error. A plain HTTP " +
    'request here is answered 426.',
  request: {
    params: IdParam,
    query: z.object({ token: z.string().optional().openapi({ description: 'The console token (lhc_...).' }) }),
  },
  responses: {
    101: { description: 'Switching protocols (WebSocket)' },
    ...errorResponses(401),
    426: { ...errorResponses(426)[426], description: 'Not a WebSocket upgrade request' },
  },
});

export function consoleRoutes(deps: ApiDeps) {
  const router = createRouter();
  const ttlMs = deps.console?.tokenTtlMs ?? DEFAULT_CONSOLE_TOKEN_TTL_MS;

  /** A console token is visible to its creator, the operator and the node's owners (members); others get 404. */
  async function visibleConsole(principal: Principal, id: string): Promise<ConsoleToken> {
    const token = await deps.store.consoles.get(id);
    if (token && (isAdmin(principal) || token.issued_to === principal.userId)) return token;
    if (token) {
      const node = await deps.store.getNode(token.node_id, nodeVisibility(principal, deps.clock.now()));
      if (node && canManageOwnedNode(principal, nodeAccess(principal, node, false))) return token;
    }
    throw new NotFoundError('console', id);
  }

  router.openapi(openConsole, async (c) => {
    const principal = c.get('principal');
    const { node, access, lease } = await consoleAccess(deps, principal, c.req.valid('param').id);
    const now = deps.clock.now();
    const issued = issueConsoleToken();
    const token = await deps.store.consoles.create(
      {
        node_id: node.id,
        user_id: localUserId(principal),
        principal: snapshotOf(principal),
        token_hash: issued.hash,
        expires_at: new Date(now.getTime() + ttlMs),
      },
      [
        {
          type: 'console.token_issued',
          actor: principal.userName,
          actor_user_id: localUserId(principal),
          node_id: node.id,
          project_id: principal.projectId,
          owner_project_id: node.owner_project?.id ?? null,
          lease_id: access === 'lessee' ? (lease?.lease_id ?? null) : null,
          details: { as: access },
        },
      ],
      now,
    );
    const base = deps.console?.publicUrl ?? new URL(c.req.url).origin;
    c.get('log').info({ node: node.id, console: token.id, as: access }, 'console token issued');
    return c.json({ ...consoleJson(token), url: consoleUrl(base, token.id, issued.value) }, 201);
  });

  router.openapi(getConsole, async (c) => {
    const token = await visibleConsole(c.get('principal'), c.req.valid('param').id);
    return c.json(consoleJson(token), 200);
  });

  router.openapi(revokeConsole, async (c) => {
    const principal = c.get('principal');
    const token = await visibleConsole(principal, c.req.valid('param').id);
    await deps.store.consoles.revoke(
      token.id,
      [
        {
          type: 'console.token_revoked',
          actor: principal.userName,
          actor_user_id: localUserId(principal),
          node_id: token.node_id,
          project_id: principal.projectId,
        },
      ],
      deps.clock.now(),
    );
    const closed = deps.console?.connections?.closeToken(token.id) ?? 0;
    c.get('log').info({ console: token.id, closed }, 'console token revoked');
    return c.body(null, 204);
  });

  router.openapi(stream, () => {
    // WebSocket upgrades never get here (the console proxy takes them off the HTTP server first).
    throw new UpgradeRequiredError('this is a console WebSocket endpoint: connect to it with a WebSocket client');
  });

  return router;
}

function consoleJson(token: ConsoleToken) {
  return {
    id: token.id,
    node_id: token.node_id,
    user_id: token.issued_to,
    created_at: token.created_at.toISOString(),
    expires_at: token.expires_at.toISOString(),
    revoked_at: token.revoked_at?.toISOString() ?? null,
  };
}
