import { createRoute, z } from '@hono/zod-openapi';
import { authenticateToken, authLimiter, clientAddress, tokenFromHeaders } from '../../access/authenticate.js';
import { ConflictError, UnauthenticatedError } from '../../domain/errors.js';
import { KeystoneRefusedError } from '../../keystone/keystone-client.js';
import { createRouter, type ApiDeps } from '../context.js';
import { errorResponses, jsonBody, jsonResponse, safeName } from '../schemas.js';

const Secret = z.string().min(1).max(4096);
const Name = safeName(255);

const SignInBody = z
  .union([
    z
      .object({
        password: z
          .object({
            user: Name.openapi({ description: "The user's name." }),
            password: Secret,
            user_domain: Name.optional().openapi({ description: 'Default: Default.' }),
            project: Name.optional().openapi({ description: "A project name; default: the user's default project." }),
            project_domain: Name.optional().openapi({ description: 'Default: the user domain.' }),
          })
          .strict(),
      })
      .strict(),
    z.object({ application_credential: z.object({ id: Name, secret: Secret }).strict() }).strict(),
    z
      .object({
        token: z
          .object({ project: Name.openapi({ description: 'The project id to switch to (GET /v1/auth/projects).' }) })
          .strict()
          .openapi({ description: 'Another project of the caller (its Keystone token in X-Auth-Token).' }),
      })
      .strict(),
  ])
  .openapi('SignIn');

const SignedInSchema = z
  .object({
    token: z.string().openapi({ description: 'A Keystone token: send it as X-Auth-Token (or Bearer). Shown once.' }),
    expires_at: z.string(),
    user: z.object({ id: z.string(), name: z.string() }),
    project: z.object({ id: z.string(), name: z.string() }).nullable(),
    role: z.string(),
  })
  .openapi('SignedIn');

const signIn = createRoute({
  method: 'post',
  path: '/v1/auth/tokens',
  tags: ['identity'],
  summary: 'Under Keystone: a token for a password or an application credential, or for another project',
  description:
    "The web UI's sign-in under LEASEHOLD_IDENTITY=keystone: Leasehold asks Keystone for a token with the " +
    'credentials given (and keeps nothing of them). With `token`, the caller (X-Auth-Token) switches to another of ' +
    'its projects. Under local identity this is a 409: use a Leasehold token.',
  security: [],
  request: { body: jsonBody(SignInBody) },
  responses: { 201: jsonResponse(SignedInSchema, 'Signed in'), ...errorResponses(400, 401, 403, 409, 503) },
});

const projects = createRoute({
  method: 'get',
  path: '/v1/auth/projects',
  tags: ['identity'],
  summary: "Under Keystone: the projects the caller's token may be switched to",
  responses: {
    200: jsonResponse(z.object({ projects: z.array(z.object({ id: z.string(), name: z.string() })) }), 'Its projects'),
    ...errorResponses(401, 409, 503),
  },
});

const signOut = createRoute({
  method: 'delete',
  path: '/v1/auth/tokens',
  tags: ['identity'],
  summary: "Under Keystone: sign out, revoking the caller's own Keystone token",
  description:
    'The token in X-Auth-Token (or Bearer) is revoked in Keystone and forgotten here at once; other replicas refuse it ' +
    'within KEYSTONE_TOKEN_CACHE_TTL. The web UI calls it on sign-out and after a project switch for the tokens it ' +
    'obtained itself. Under local identity this is a 409 (revoke a Leasehold token with DELETE /v1/tokens/{id}).',
  responses: { 204: { description: 'Revoked' }, ...errorResponses(401, 409, 503) },
});

const methods = createRoute({
  method: 'get',
  path: '/v1/auth/methods',
  tags: ['identity'],
  summary: 'How to sign in here (no token needed): a Leasehold token, or Keystone credentials',
  security: [],
  responses: {
    200: jsonResponse(
      z.object({
        identity: z.enum(['local', 'keystone']),
        methods: z.array(z.enum(['token', 'password', 'application_credential'])),
      }),
      'The sign-in methods',
    ),
  },
});

/**
 * Signing in under Keystone from a browser: the web UI cannot talk to Keystone itself (another origin, no CORS),
 * so Leasehold obtains the token for it. Unauthenticated (it is how one gets a token); a refusal counts as a bad
 * token for the caller's address (access/auth-limiter.ts), so passwords cannot be guessed through it any faster.
 */
export function signInRoutes(deps: ApiDeps) {
  const router = createRouter();
  const keystone = () => {
    if (!deps.keystone) throw new ConflictError('identity is local: sign in with a Leasehold token', { details: { identity: 'local' } });
    return deps.keystone;
  };

  router.openapi(methods, (c) =>
    c.json(
      deps.keystone
        ? { identity: 'keystone' as const, methods: ['password' as const, 'application_credential' as const, 'token' as const] }
        : { identity: 'local' as const, methods: ['token' as const] },
      200,
    ),
  );

  router.openapi(signIn, async (c) => {
    const ks = keystone();
    const client = clientAddress(c);
    const limiter = authLimiter(deps);
    const refusal = limiter.refusal(client);
    if (refusal) throw refusal;
    const body = c.req.valid('json');
    let auth: unknown;
    let who: string;
    if ('password' in body) {
      const p = body.password;
      const userDomain = p.user_domain ?? 'Default';
      who = `${p.user}${p.project ? `@${p.project}` : ''}`;
      auth = {
        auth: {
          identity: { methods: ['password'], password: { user: { name: p.user, domain: { name: userDomain }, password: p.password } } },
          ...(p.project ? { scope: { project: { name: p.project, domain: { name: p.project_domain ?? userDomain } } } } : {}),
        },
      };
    } else if ('application_credential' in body) {
      who = `application credential ${body.application_credential.id}`;
      auth = { auth: { identity: { methods: ['application_credential'], application_credential: body.application_credential } } };
    } else {
      const current = tokenFromHeaders(c.req.header('authorization'), c.req.header('x-auth-token'));
      if (!current) throw new UnauthenticatedError('switching projects needs the current Keystone token in X-Auth-Token');
      who = `the caller's token, for project ${body.token.project}`;
      auth = { auth: { identity: { methods: ['token'], token: { id: current } }, scope: { project: { id: body.token.project } } } };
    }
    let issued: Awaited<ReturnType<typeof ks.issueWith>>;
    try {
      issued = await ks.issueWith(auth, who);
    } catch (err) {
      if (err instanceof KeystoneRefusedError) {
        limiter.failed(client);
        throw new UnauthenticatedError(`Keystone refused the credentials of ${who}`);
      }
      throw err;
    }
    // As every request with it will be: the principal it stands for (roles mapped, the project's row made).
    const principal = await authenticateToken(deps, issued.token, client);
    return c.json(
      {
        token: issued.token,
        expires_at: issued.info.expiresAt.toISOString(),
        user: { id: principal.userId, name: principal.userName },
        project: principal.projectId && principal.projectName ? { id: principal.projectId, name: principal.projectName } : null,
        role: principal.role,
      },
      201,
    );
  });

  router.openapi(signOut, async (c) => {
    const ks = keystone();
    const token = tokenFromHeaders(c.req.header('authorization'), c.req.header('x-auth-token'));
    const principal = await authenticateToken(deps, token, clientAddress(c));
    try {
      await ks.revokeToken(token!);
    } catch (err) {
      if (!(err instanceof KeystoneRefusedError)) throw err;
      throw new UnauthenticatedError('Keystone no longer accepts this token');
    } finally {
      deps.identity.forget?.(token!);
    }
    c.get('log').info({ user: principal.userName, project: principal.projectName }, 'signed out: Keystone token revoked');
    return c.body(null, 204);
  });

  router.openapi(projects, async (c) => {
    const ks = keystone();
    const token = tokenFromHeaders(c.req.header('authorization'), c.req.header('x-auth-token'));
    await authenticateToken(deps, token, clientAddress(c));
    const list = await ks.userProjects(token!);
    return c.json({ projects: list.map((p) => ({ id: p.id, name: p.name })) }, 200);
  });

  return router;
}
