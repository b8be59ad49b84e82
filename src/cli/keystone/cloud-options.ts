import { envValue, type Env } from '../env.js';

/**
 * One cloud's settings in openstacksdk's vocabulary (the `clouds.yaml` keys: `auth_type`, `auth: {...}`,
 * `interface`, `region_name`, `cacert`), whether they came from a `clouds.yaml` or from the `OS_*` variables,
 * so one function turns either into a Keystone request.
 */
export interface CloudOptions {
  readonly authType: string | undefined;
  /** `auth_url`, `username`, `password`, `project_name`, ... (AUTH_KEYS). */
  readonly auth: Readonly<Partial<Record<AuthKey, string>>>;
  readonly interface: string | undefined;
  readonly regionName: string | undefined;
  readonly cacert: string | undefined;
}

/** The keys of `auth:` this CLI understands (keystoneauth's password, token and application-credential plugins). */
export const AUTH_KEYS = [
  'auth_url',
  'username',
  'user_id',
  'password',
  'project_name',
  'project_id',
  'user_domain_name',
  'user_domain_id',
  'project_domain_name',
  'project_domain_id',
  'domain_name',
  'domain_id',
  'default_domain_name',
  'default_domain_id',
  'system_scope',
  'application_credential_id',
  'application_credential_name',
  'application_credential_secret',
  'token',
] as const;

export type AuthKey = (typeof AUTH_KEYS)[number];

/** The values that are secrets: redacted from every message and never written to the token cache. */
export const SECRET_KEYS: readonly AuthKey[] = ['password', 'application_credential_secret', 'token'];

/** Old (Keystone v2) names openstacksdk still accepts. */
const LEGACY: Readonly<Record<string, AuthKey>> = { tenant_name: 'project_name', tenant_id: 'project_id' };

/** A key as openstacksdk normalises it: `project-name` and `project_name` are one key; `tenant_*` is `project_*`. */
export function authKey(raw: string): AuthKey | undefined {
  const key = raw.trim().toLowerCase().replace(/-/g, '_');
  if (key in LEGACY) return LEGACY[key];
  return (AUTH_KEYS as readonly string[]).includes(key) ? (key as AuthKey) : undefined;
}

/** True when the `OS_*` variables name a Keystone (OS_AUTH_URL): only then do they count as credentials. */
export function hasEnvironmentCredentials(env: Env): boolean {
  return envValue(env, 'OS_AUTH_URL') !== undefined;
}

/** The `OS_*` variables as a cloud: `OS_PROJECT_NAME` is `auth.project_name`, `OS_TENANT_NAME` too, and so on. */
export function optionsFromEnvironment(env: Env): CloudOptions {
  const auth: Partial<Record<AuthKey, string>> = {};
  // The legacy spellings first, so OS_PROJECT_NAME wins over OS_TENANT_NAME when both are set.
  for (const name of [...Object.keys(LEGACY), ...AUTH_KEYS]) {
    const value = envValue(env, `OS_${name.toUpperCase()}`);
    const key = authKey(name);
    if (value !== undefined && key) auth[key] = value;
  }
  return {
    authType: envValue(env, 'OS_AUTH_TYPE'),
    auth,
    interface: envValue(env, 'OS_INTERFACE'),
    regionName: envValue(env, 'OS_REGION_NAME'),
    cacert: envValue(env, 'OS_CACERT'),
  };
}

/**
 * Secrets a `clouds.yaml` left out, taken from `OS_PASSWORD` / `OS_APPLICATION_CREDENTIAL_SECRET` as the
 * `openstack` CLI does (a profile without its password is the usual way to keep it out of files). Only fills
 * gaps: a value the cloud sets is never overridden by the environment.
 */
export function withSecretsFromEnvironment(options: CloudOptions, env: Env): CloudOptions {
  const auth = { ...options.auth };
  for (const key of ['password', 'application_credential_secret'] as const) {
    const value = envValue(env, `OS_${key.toUpperCase()}`);
    if (auth[key] === undefined && value !== undefined) auth[key] = value;
  }
  return { ...options, auth };
}

/** The secret values of a cloud, for redaction. */
export function secretsOf(options: CloudOptions): string[] {
  return SECRET_KEYS.map((key) => options.auth[key]).filter((v): v is string => v !== undefined);
}
