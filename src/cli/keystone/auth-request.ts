import { createHash } from 'node:crypto';
import { UsageError } from '../errors.js';
import { secretsOf, type AuthKey, type CloudOptions } from './cloud-options.js';

/** Keystone's three identity methods this CLI speaks (v3 `identity.methods`). */
export const AuthMethod = {
  password: 'password',
  applicationCredential: 'application_credential',
  token: 'token',
} as const;
export type AuthMethod = (typeof AuthMethod)[keyof typeof AuthMethod];

/** keystoneauth's plugin names (`OS_AUTH_TYPE` / `auth_type`) and the method each one is. */
const AUTH_TYPES: Readonly<Record<string, AuthMethod>> = {
  password: AuthMethod.password,
  v3password: AuthMethod.password,
  v3applicationcredential: AuthMethod.applicationCredential,
  token: AuthMethod.token,
  v3token: AuthMethod.token,
};

/** Everything needed to ask Keystone for a token, and to talk about it without showing a secret. */
export interface AuthRequest {
  /** The v3 root, e.g. `https://keystone.example.org:5000/v3`: shown in messages. */
  readonly authUrl: string;
  /** `{authUrl}/auth/tokens`. */
  readonly tokensUrl: string;
  readonly method: AuthMethod;
  /** The JSON body of `POST /v3/auth/tokens` (holds the secret: never printed, never cached). */
  readonly body: unknown;
  /** Who is asking, for messages: `alice@physics-lab`, `application credential ci of alice`. No secret. */
  readonly identity: string;
  /** sha256 of the auth URL and the identity fields (never a password or secret in clear): names the cache entry. */
  readonly cacheKey: string;
  /** The values to redact from any output. */
  readonly secrets: readonly string[];
}

type Auth = CloudOptions['auth'];
type Ref = { readonly id: string } | { readonly name: string };

/** `{id}` when an id is given, else `{name}`, else undefined. */
function ref(auth: Auth, idKey: AuthKey, nameKey: AuthKey): Ref | undefined {
  const id = auth[idKey];
  if (id !== undefined) return { id };
  const name = auth[nameKey];
  return name !== undefined ? { name } : undefined;
}

/**
 * The domain a name lives in: its own `*_domain_*`, else `domain_*` (openstacksdk moves it there when a project
 * is given), else `default_domain_*`, else the domain with id `default` (the `openstack` CLI's default).
 */
function domainFor(auth: Auth, prefix: 'user' | 'project'): Ref {
  return (
    ref(auth, `${prefix}_domain_id`, `${prefix}_domain_name`) ??
    ref(auth, 'domain_id', 'domain_name') ??
    ref(auth, 'default_domain_id', 'default_domain_name') ?? { id: 'default' }
  );
}

/** The v3 root from an auth URL given with or without `/v3` (a `/v2.0` one is the same Keystone's old API). */
export function keystoneRoot(authUrl: string): string {
  let url: URL;
  try {
    url = new URL(authUrl);
  } catch {
    throw new UsageError(`the Keystone auth URL ${JSON.stringify(authUrl)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`the Keystone auth URL ${url.protocol}//${url.host} must start with http:// or https://`);
  }
  if (url.username || url.password) {
    throw new UsageError(`the Keystone auth URL ${url.protocol}//${url.host} must not contain a user name or password`);
  }
  const path = url.pathname.replace(/\/+$/, '').replace(/\/v2\.0$/, '');
  const root = /\/v3$/.test(path) ? path : `${path}/v3`;
  return `${url.protocol}//${url.host}${root}`;
}

function methodOf(options: CloudOptions): AuthMethod {
  const type = options.authType?.toLowerCase();
  if (type !== undefined) {
    const method = AUTH_TYPES[type];
    if (!method) {
      throw new UsageError(
        `the Keystone auth type "${options.authType}" is not supported; use one of ${Object.keys(AUTH_TYPES).join(', ')}`,
      );
    }
    return method;
  }
  // No type given: what the fields say (the `openstack` CLI defaults to password and would fail on the others).
  const a = options.auth;
  const hasUser = a.username !== undefined || a.user_id !== undefined;
  if (a.application_credential_secret !== undefined && a.password === undefined) return AuthMethod.applicationCredential;
  if (a.token !== undefined && !hasUser && a.password === undefined) return AuthMethod.token;
  return AuthMethod.password;
}

/** `physics-lab`, `system`, `domain Default` or `no project`: the scope in words. */
function scopeLabel(auth: Auth): string {
  if (auth.project_name !== undefined || auth.project_id !== undefined) return (auth.project_name ?? auth.project_id) as string;
  if (auth.system_scope !== undefined) return 'system';
  const domain = auth.domain_name ?? auth.domain_id;
  return domain !== undefined ? `domain ${domain}` : 'no project';
}

/** The `scope` of the request: a project, the system, a domain, or none (Keystone's default project, if any). */
function scopeOf(auth: Auth): unknown {
  const project = ref(auth, 'project_id', 'project_name');
  if (project && auth.system_scope !== undefined) {
    throw new UsageError('give a project or a system scope (OS_SYSTEM_SCOPE), not both');
  }
  if (project) return { project: 'id' in project ? project : { ...project, domain: domainFor(auth, 'project') } };
  if (auth.system_scope !== undefined) {
    if (auth.system_scope.toLowerCase() !== 'all') {
      throw new UsageError(`the system scope "${auth.system_scope}" is not supported; Keystone's only system is "all"`);
    }
    return { system: { all: true } };
  }
  const domain = ref(auth, 'domain_id', 'domain_name');
  return domain ? { domain } : undefined;
}

function need(value: string | undefined, what: string): string {
  if (value === undefined) throw new UsageError(`Keystone ${what}`);
  return value;
}

function userOf(auth: Auth): { readonly id: string } | { readonly name: string; readonly domain: Ref } | undefined {
  if (auth.user_id !== undefined) return { id: auth.user_id };
  if (auth.username !== undefined) return { name: auth.username, domain: domainFor(auth, 'user') };
  return undefined;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Turns a cloud's settings into the `POST /v3/auth/tokens` request. Pure; a missing or contradictory setting is a
 * UsageError (exit 2) naming both spellings of what is missing.
 */
export function buildAuthRequest(options: CloudOptions): AuthRequest {
  const auth = options.auth;
  const authUrl = keystoneRoot(need(auth.auth_url, 'credentials need an auth URL (OS_AUTH_URL or auth.auth_url)'));
  const method = methodOf(options);
  const user = userOf(auth);
  let identity: unknown;
  let label: string;
  let scope: unknown;
  let extraKey: unknown = null;

  if (method === AuthMethod.password) {
    if (!user) throw new UsageError('Keystone password authentication needs a user (OS_USERNAME or OS_USER_ID; auth.username or auth.user_id)');
    const password = need(auth.password, 'password authentication needs a password (OS_PASSWORD or auth.password)');
    identity = { methods: ['password'], password: { user: { ...user, password } } };
    label = `${auth.username ?? auth.user_id}@${scopeLabel(auth)}`;
    scope = scopeOf(auth);
  } else if (method === AuthMethod.applicationCredential) {
    const secret = need(
      auth.application_credential_secret,
      'application credentials need a secret (OS_APPLICATION_CREDENTIAL_SECRET or auth.application_credential_secret)',
    );
    const id = auth.application_credential_id;
    const name = auth.application_credential_name;
    if (id === undefined && name === undefined) {
      throw new UsageError(
        'Keystone application credentials need an id (OS_APPLICATION_CREDENTIAL_ID) or a name (OS_APPLICATION_CREDENTIAL_NAME) and its user',
      );
    }
    if (id === undefined && !user) {
      throw new UsageError('a Keystone application credential named by name needs its user (OS_USERNAME or OS_USER_ID)');
    }
    const credential = id !== undefined ? { id, secret } : { name, user, secret };
    identity = { methods: ['application_credential'], application_credential: credential };
    label = `application credential ${name ?? id}${id === undefined ? ` of ${auth.username ?? auth.user_id}` : ''}`;
    // An application credential is scoped by Keystone to its own project: a scope in the request is an error there.
    scope = undefined;
  } else {
    const token = need(auth.token, 'token authentication needs a token (OS_TOKEN or auth.token)');
    identity = { methods: ['token'], token: { id: token } };
    label = `token for ${scopeLabel(auth)}`;
    scope = scopeOf(auth);
    // Two different tokens are two different identities for the cache; only a hash of the token is kept.
    extraKey = sha256(token);
  }

  const body = { auth: scope === undefined ? { identity } : { identity, scope } };
  const keyFields = [
    1,
    authUrl,
    method,
    method === AuthMethod.applicationCredential ? null : (user ?? null),
    method === AuthMethod.applicationCredential ? null : (scope ?? null),
    method === AuthMethod.applicationCredential
      ? [auth.application_credential_id ?? null, auth.application_credential_name ?? null, user ?? null]
      : null,
    extraKey,
  ];
  return {
    authUrl,
    tokensUrl: `${authUrl}/auth/tokens`,
    method,
    body,
    identity: label,
    cacheKey: sha256(JSON.stringify(keyFields)),
    secrets: secretsOf(options),
  };
}
