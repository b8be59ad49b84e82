import { apiError, fakeApi, json, meBody, type Handler } from './fake-api';

/** Two Keystone projects (ids as Keystone makes them: 32 hex digits) and the tokens the fake Keystone sign-in gives. */
export const LESSEE = { id: 'f9e8d7c6b5a4039281706f5e4d3c2b1a', name: 'lessee-x' };
export const OWNER = { id: '0a1b2c3d4e5f60718293a4b5c6d7e8f9', name: 'owner-a' };
export const PASSWORD = 'correct horse battery staple';
export const APP_SECRET = 'app-cred-secret-9f2c';
/** Far from any test's clock: the tokens are good for the whole run unless a test says otherwise. */
export const EXPIRES = '2099-06-01T12:00:00.000Z';

export interface KeystoneFakeOptions {
  /** Projects by token (the token's scope); a token not here is refused (401). */
  tokens?: Record<string, { id: string; name: string } | null>;
  /** GET /v1/auth/projects of every token. */
  projects?: Array<{ id: string; name: string }>;
  expiresAt?: string;
  role?: 'admin' | 'manager' | 'member' | 'reader';
  /** More routes (GET /v1/projects, ...), or replacements. */
  routes?: Record<string, Handler>;
}

const bearer = (request: Request) => request.headers.get('authorization')?.replace(/^Bearer /, '') ?? null;

/**
 * The API under LEASEHOLD_IDENTITY=keystone as the UI sees it: GET /v1/auth/methods says keystone, POST
 * /v1/auth/tokens takes user "x-member" with PASSWORD (token ks-lessee), the application credential "ac-1" with
 * APP_SECRET (token ks-lessee) or a switch to another project (token ks-<project name>), refusing with the API's
 * message; /v1/me answers for the tokens it gave.
 */
export function keystoneApi(options: KeystoneFakeOptions = {}) {
  const tokens: Record<string, { id: string; name: string } | null> = { 'ks-lessee': LESSEE, 'ks-owner-a': OWNER, ...options.tokens };
  const role = options.role ?? 'member';
  const expiresAt = options.expiresAt ?? EXPIRES;
  const scopes = { ...tokens };
  const signedIn = (token: string) => {
    // Keystone mints a new token at each sign-in: one revoked at a sign-out is good again here.
    const project = scopes[token] ?? null;
    tokens[token] = project;
    return json({ token, expires_at: expiresAt, user: { id: 'u-ks', name: 'x-member' }, project, role }, 201);
  };
  // Like the API: a token it does not know (any more) is refused everywhere but at the sign-in's own routes.
  const guarded = (handler: Handler): Handler => (request, url) => {
    const token = bearer(request);
    return token && token in tokens ? handler(request, url) : apiError(401, 'unauthorized', 'missing or invalid token');
  };
  const data: Record<string, Handler> = {
    'GET /v1/nodes': () => ({ nodes: [], next: null }),
    'GET /v1/leases': () => ({ leases: [], next: null }),
    ...options.routes,
  };
  const api = fakeApi({
    'GET /v1/auth/methods': () => ({ identity: 'keystone', methods: ['password', 'application_credential', 'token'] }),
    'POST /v1/auth/tokens': async (request) => {
      const body = (await request.json()) as {
        password?: { user: string; password: string; project?: string };
        application_credential?: { id: string; secret: string };
        token?: { project: string };
      };
      if (body.password) {
        const p = body.password;
        if (p.user !== 'x-member' || p.password !== PASSWORD) {
          return apiError(401, 'unauthorized', `Keystone refused the credentials of ${p.user}${p.project ? `@${p.project}` : ''}`);
        }
        return signedIn('ks-lessee');
      }
      if (body.application_credential) {
        if (body.application_credential.secret !== APP_SECRET) {
          return apiError(401, 'unauthorized', `Keystone refused the credentials of application credential ${body.application_credential.id}`);
        }
        return signedIn('ks-lessee');
      }
      const current = bearer(request);
      const target = (options.projects ?? [LESSEE, OWNER]).find((p) => p.id === body.token?.project);
      // A project listed but without a token here: Keystone no longer lets the user into it.
      if (!current || !(current in tokens) || !target || !(`ks-${target.name}` in tokens)) {
        return apiError(401, 'unauthorized', `Keystone refused the credentials of the caller's token, for project ${body.token?.project}`);
      }
      return signedIn(`ks-${target.name}`);
    },
    // Sign-out: the caller's own token revoked (here: no longer known).
    'DELETE /v1/auth/tokens': (request) => {
      const token = bearer(request);
      if (!token || !(token in tokens)) return apiError(401, 'unauthorized', 'missing or invalid token');
      delete tokens[token];
      return new Response(null, { status: 204 });
    },
    'GET /v1/auth/projects': (request) =>
      bearer(request)! in tokens ? { projects: options.projects ?? [LESSEE, OWNER] } : apiError(401, 'unauthorized', 'missing or invalid token'),
    'GET /v1/me': (request) => {
      const token = bearer(request);
      if (!token || !(token in tokens)) return apiError(401, 'unauthorized', 'missing or invalid token');
      return meBody(role, tokens[token] ?? null, 'keystone');
    },
    ...Object.fromEntries(Object.entries(data).map(([route, handler]) => [route, route.includes('/v1/auth/') ? handler : guarded(handler)])),
  });
  return { ...api, tokens };
}

/** The token each request carried, for the requests to one path. */
export function tokensSentTo(requests: readonly Request[], method: string, path: string): Array<string | null> {
  return requests.filter((r) => r.method === method && new URL(r.url).pathname === path).map(bearer);
}
