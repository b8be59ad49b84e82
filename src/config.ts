import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseDuration } from './domain/duration.js';
import { InvalidRequestError } from './domain/errors.js';
import { DEFAULT_NOTICE_OFFSETS_MS, MAX_NOTICE_OFFSETS, normalizeOffsets } from './domain/notices.js';
import type { KeystoneCredentials } from './domain/identity-backend.js';

/** Everything `leasehold serve` is configured with: environment variables, overridden by flags. */
export interface Config {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly dataDir: string;
  /** PostgreSQL when set; embedded PGlite in `<dataDir>/pgdata` otherwise. */
  readonly databaseUrl: string | null;
  readonly driver: 'simulated' | 'ironic';
  /** Raw JSON of LEASEHOLD_SIMULATED_NODES; null means the built-in demo inventory. */
  readonly simulatedNodesJson: string | null;
  readonly simulatedTimingsJson: string | null;
  /** Where and how to reach Ironic; set when `driver` is `ironic`, null otherwise. */
  readonly ironic: IronicConfig | null;
  readonly adminToken: string | null;
  readonly syncIntervalMs: number;
  /** How often Ironic is compared with the store and drift repaired (also right after start). */
  readonly reconcileIntervalMs: number;
  /** Between quick looks for failed leased nodes (Ironic's troubled nodes only) between passes; 0: passes only. */
  readonly failureWatchMs: number;
  /** A YAML file of node policy rules overriding the defaults (Ironic-style check strings). */
  readonly policyFile: string | null;
  /** Kept free after every lease so the node can be cleaned before the next one (0 allowed). */
  readonly cleaningGapMs: number;
  /** Calls setting or clearing Ironic's lessee at once (LEASEHOLD_MARK_CONCURRENCY; the lease engine's mark queue). */
  readonly markConcurrency: number;
  /** Lease notifications: POSTed here (started, ending soon, ended, failed), signed with the secret. */
  readonly webhookUrl: string | null;
  readonly webhookSecret: string | null;
  /**
   * How long before a lease's end `lease.ending_soon` is sent (event and webhook), largest first; a project may set
   * its own (LEASEHOLD_NOTICE_OFFSETS; empty: none).
   */
  readonly noticeOffsetsMs: readonly number[];
  /** `api` serves requests, `worker` runs the lease engine, `all` both. */
  readonly role: 'api' | 'worker' | 'all';
  readonly logLevel: string;
  /** Public base URL, for links in responses; derived from the listening address when unset. */
  readonly publicUrl: string | null;
  /** How long a serial console token can be used to open connections (LEASEHOLD_CONSOLE_TOKEN_TTL). */
  readonly consoleTokenTtlMs: number;
  /** Who vouches for callers' tokens: Leasehold's own users (`local`) or Keystone. */
  readonly identity: 'local' | 'keystone';
  /** Keystone and Leasehold's service credentials there: set with LEASEHOLD_IDENTITY=keystone or IRONIC_AUTH_TYPE=keystone. */
  readonly keystone: KeystoneConfig | null;
  /** Tenant networks on leased nodes (LEASEHOLD_NETWORKS, NEUTRON_URL). */
  readonly networks: NetworksConfig;
  /** Where `/metrics` is served and who may scrape it (LEASEHOLD_METRICS_*). */
  readonly metrics: MetricsConfig;
}

export interface MetricsConfig {
  /** A port of its own for `/metrics` (then the API port answers 404 there); null: the API port serves it. */
  readonly port: number | null;
  /** Where the metrics port listens (LEASEHOLD_METRICS_HOST; default LEASEHOLD_HOST). */
  readonly host: string;
  /** When set, a scrape must send `Authorization: Bearer <token>`; null: `/metrics` is open. */
  readonly token: string | null;
}

export interface NetworksConfig {
  /**
   * `auto` (default): the simulated networks with the simulated driver; Neutron with Ironic when NEUTRON_URL is set
   * or Keystone's catalog has a `network` endpoint; off otherwise. `neutron` requires Neutron (the start says what is
   * missing); `simulated` requires the simulated driver; `off` answers every network endpoint 409 not_configured.
   */
  readonly mode: 'auto' | 'neutron' | 'simulated' | 'off';
  /** Neutron's endpoint; null: the `network` endpoint of Keystone's catalog (KEYSTONE_INTERFACE, KEYSTONE_REGION). */
  readonly neutronUrl: string | null;
}

export interface KeystoneConfig {
  /** The v3 root, e.g. `http://keystone.example:5000/v3`. */
  readonly url: string;
  readonly credentials: KeystoneCredentials;
  /** How long a token validation is reused: the revocation lag (KEYSTONE_TOKEN_CACHE_TTL, default 30 s). */
  readonly cacheTtlMs: number;
  /** The project whose admins are the operator (KEYSTONE_ADMIN_PROJECT, default `admin`). */
  readonly adminProject: string;
  /** Which endpoints of the catalog Leasehold uses (Ironic's): `internal` by default. */
  readonly interface: string;
  readonly region: string | null;
}

export interface IronicConfig {
  /** Ironic's API root, e.g. `http://127.0.0.1:6385`; null: the `baremetal` endpoint of Keystone's catalog. */
  readonly url: string | null;
  readonly auth:
    | { readonly type: 'none' }
    | { readonly type: 'http_basic'; readonly username: string; readonly password: string }
    | { readonly type: 'token'; readonly token: string }
    /** Leasehold's Keystone service token (KEYSTONE_*), renewed before it expires. */
    | { readonly type: 'keystone' };
  /** Per HTTP request. */
  readonly timeoutMs: number;
}

export interface ServeFlags {
  readonly port?: number;
  readonly host?: string;
  readonly role?: string;
}

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * `$XDG_DATA_HOME/leasehold` for the embedded store; for a PostgreSQL one a directory of its own under it, named
 * after the database (host, port, name, user — never the password), so a replica on PostgreSQL never writes over
 * the embedded store's `admin-token`, nor two databases' files over each other.
 */
export function defaultDataDir(env: Env, databaseUrl: string | null = null): string {
  const base = join(env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share'), 'leasehold');
  if (databaseUrl === null) return base;
  let id = databaseUrl;
  try {
    const u = new URL(databaseUrl);
    id = `${u.protocol}//${u.username}@${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    // Not a URL (a libpq key=value string): hashed whole, as it is only ever hashed.
  }
  return join(base, `postgres-${createHash('sha256').update(id).digest('hex').slice(0, 12)}`);
}

export function loadConfig(env: Env, flags: ServeFlags = {}): Config {
  if (env.LEASEHOLD_WEBHOOK_URL?.trim() && !env.LEASEHOLD_WEBHOOK_SECRET?.trim()) {
    throw configError('LEASEHOLD_WEBHOOK_SECRET', 'must be set with LEASEHOLD_WEBHOOK_URL: deliveries are HMAC-signed with it');
  }
  const driver = env.LEASEHOLD_DRIVER?.trim() || 'simulated';
  if (driver !== 'simulated' && driver !== 'ironic') {
    throw configError('LEASEHOLD_DRIVER', `must be "simulated" or "ironic", not ${JSON.stringify(driver)}`);
  }
  return {
    host: flags.host ?? (env.LEASEHOLD_HOST?.trim() || '127.0.0.1'),
    port: flags.port ?? parsePort(env.LEASEHOLD_PORT),
    dataDir: env.LEASEHOLD_DATA_DIR?.trim() || defaultDataDir(env, env.DATABASE_URL?.trim() || null),
    databaseUrl: env.DATABASE_URL?.trim() || null,
    driver,
    simulatedNodesJson: simulatedNodes(env.LEASEHOLD_SIMULATED_NODES?.trim() || null),
    simulatedTimingsJson: env.LEASEHOLD_SIMULATED_TIMINGS?.trim() || null,
    ironic: driver === 'ironic' ? ironicConfig(env) : null,
    identity: identityKind(env),
    keystone: keystoneConfig(env),
    networks: networksConfig(env, driver),
    adminToken: adminToken(env.LEASEHOLD_ADMIN_TOKEN?.trim() || null),
    syncIntervalMs: durationVar(env, 'LEASEHOLD_SYNC_INTERVAL', '60s'),
    reconcileIntervalMs: durationVar(env, 'LEASEHOLD_RECONCILE_INTERVAL', '30s'),
    // `0` turns the quick looks off (a failed node then waits for the next full pass).
    failureWatchMs: env.LEASEHOLD_FAILURE_WATCH_INTERVAL?.trim() === '0' ? 0 : durationVar(env, 'LEASEHOLD_FAILURE_WATCH_INTERVAL', '5s'),
    policyFile: env.LEASEHOLD_POLICY_FILE?.trim() || null,
    cleaningGapMs: parseDuration(env.LEASEHOLD_CLEANING_GAP?.trim() || '10m', 'LEASEHOLD_CLEANING_GAP'),
    markConcurrency: markConcurrency(env.LEASEHOLD_MARK_CONCURRENCY),
    webhookUrl: webhookUrl(env.LEASEHOLD_WEBHOOK_URL?.trim() || null),
    webhookSecret: env.LEASEHOLD_WEBHOOK_SECRET?.trim() || null,
    noticeOffsetsMs: noticeOffsets(env),
    role: parseRole(flags.role ?? env.LEASEHOLD_ROLE?.trim() ?? 'all'),
    logLevel: env.LEASEHOLD_LOG_LEVEL?.trim() || 'info',
    publicUrl: publicUrl(env.LEASEHOLD_PUBLIC_URL?.trim().replace(/\/+$/, '') || null),
    consoleTokenTtlMs: durationVar(env, 'LEASEHOLD_CONSOLE_TOKEN_TTL', '10m'),
    metrics: metricsConfig(env, flags.host ?? (env.LEASEHOLD_HOST?.trim() || '127.0.0.1')),
  };
}

function metricsConfig(env: Env, apiHost: string): MetricsConfig {
  const port = env.LEASEHOLD_METRICS_PORT?.trim() ? parsePort(env.LEASEHOLD_METRICS_PORT, 'LEASEHOLD_METRICS_PORT') : null;
  const token = env.LEASEHOLD_METRICS_TOKEN?.trim() || null;
  // It goes in Prometheus's `authorization` header as it is: whitespace would not survive, and a short one is guessed.
  if (token !== null && (/\s/.test(token) || token.length < 16)) {
    throw configError('LEASEHOLD_METRICS_TOKEN', 'must be at least 16 characters without whitespace (e.g. `openssl rand -hex 24`)');
  }
  return { port, host: env.LEASEHOLD_METRICS_HOST?.trim() || apiHost, token };
}

function identityKind(env: Env): Config['identity'] {
  const value = env.LEASEHOLD_IDENTITY?.trim() || 'local';
  if (value === 'local' || value === 'keystone') return value;
  throw configError('LEASEHOLD_IDENTITY', `must be "local" or "keystone", not ${JSON.stringify(value)}`);
}

/** Keystone's settings, when anything needs them (the identity backend, or Ironic behind Keystone). */
function keystoneConfig(env: Env): KeystoneConfig | null {
  const needed =
    identityKind(env) === 'keystone' ||
    env.IRONIC_AUTH_TYPE?.trim() === 'keystone' ||
    env.LEASEHOLD_NETWORKS?.trim() === 'neutron' ||
    (!!env.NEUTRON_URL?.trim() && env.LEASEHOLD_DRIVER?.trim() === 'ironic' && (env.LEASEHOLD_NETWORKS?.trim() || 'auto') === 'auto');
  if (!needed) return null;
  const url = env.KEYSTONE_URL?.trim();
  if (!url) throw configError('KEYSTONE_URL', "is required with LEASEHOLD_IDENTITY=keystone, IRONIC_AUTH_TYPE=keystone or Neutron (NEUTRON_URL, LEASEHOLD_NETWORKS=neutron): Keystone's v3 root, e.g. http://keystone:5000/v3");
  const get = (name: string) => env[name]?.trim() || '';
  let credentials: KeystoneConfig['credentials'];
  if (get('KEYSTONE_APPLICATION_CREDENTIAL_ID')) {
    const secret = env.KEYSTONE_APPLICATION_CREDENTIAL_SECRET ?? '';
    if (!secret) throw configError('KEYSTONE_APPLICATION_CREDENTIAL_SECRET', 'is required with KEYSTONE_APPLICATION_CREDENTIAL_ID');
    credentials = { type: 'application_credential', id: get('KEYSTONE_APPLICATION_CREDENTIAL_ID'), secret };
  } else {
    if (!get('KEYSTONE_USERNAME') || !env.KEYSTONE_PASSWORD) {
      throw configError('KEYSTONE_USERNAME', "and KEYSTONE_PASSWORD (or KEYSTONE_APPLICATION_CREDENTIAL_ID and _SECRET) are required: Leasehold's own service credentials in Keystone");
    }
    credentials = {
      type: 'password',
      username: get('KEYSTONE_USERNAME'),
      password: env.KEYSTONE_PASSWORD,
      userDomainName: get('KEYSTONE_USER_DOMAIN_NAME') || 'Default',
      projectName: get('KEYSTONE_PROJECT_NAME') || 'service',
      projectDomainName: get('KEYSTONE_PROJECT_DOMAIN_NAME') || 'Default',
    };
  }
  const cacheTtlMs = parseDuration(get('KEYSTONE_TOKEN_CACHE_TTL') || '30s', 'KEYSTONE_TOKEN_CACHE_TTL');
  return {
    url,
    credentials,
    cacheTtlMs,
    adminProject: get('KEYSTONE_ADMIN_PROJECT') || 'admin',
    interface: get('KEYSTONE_INTERFACE') || 'internal',
    region: get('KEYSTONE_REGION') || null,
  };
}

function networksConfig(env: Env, driver: string): NetworksConfig {
  const mode = env.LEASEHOLD_NETWORKS?.trim() || 'auto';
  if (mode !== 'auto' && mode !== 'neutron' && mode !== 'simulated' && mode !== 'off') {
    throw configError('LEASEHOLD_NETWORKS', `must be "auto", "neutron", "simulated" or "off", not ${JSON.stringify(mode)}`);
  }
  if (mode === 'simulated' && driver !== 'simulated') {
    throw configError('LEASEHOLD_NETWORKS', 'simulated needs LEASEHOLD_DRIVER=simulated: a real Ironic plugs only real Neutron ports');
  }
  const url = env.NEUTRON_URL?.trim() || null;
  if (url !== null) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw configError('NEUTRON_URL', `is not a URL: ${JSON.stringify(url)}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw configError('NEUTRON_URL', 'must be http(s)');
  }
  const needsKeystone = mode === 'neutron' || (mode === 'auto' && driver === 'ironic' && url !== null);
  if (needsKeystone && !env.KEYSTONE_URL?.trim()) {
    throw configError('KEYSTONE_URL', "is required for Neutron (NEUTRON_URL or LEASEHOLD_NETWORKS=neutron): Leasehold calls Neutron with its Keystone service token");
  }
  return { mode, neutronUrl: url };
}

function ironicConfig(env: Env): IronicConfig {
  const type = env.IRONIC_AUTH_TYPE?.trim() || 'none';
  const url = env.IRONIC_URL?.trim();
  // Behind Keystone, Ironic's endpoint may come from the catalog.
  if (!url && type === 'keystone') return { url: null, auth: { type }, timeoutMs: durationVar(env, 'IRONIC_TIMEOUT', '30s') };
  if (!url) throw configError('IRONIC_URL', "is required with LEASEHOLD_DRIVER=ironic: Ironic's API root, e.g. http://127.0.0.1:6385");
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw configError('IRONIC_URL', `is not a URL: ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw configError('IRONIC_URL', 'must be http(s)');
  if (parsed.username || parsed.password) throw configError('IRONIC_URL', 'must not carry credentials: use IRONIC_AUTH_TYPE=http_basic');
  const required = (name: string) => {
    const value = env[name];
    if (!value) throw configError(name, `is required with IRONIC_AUTH_TYPE=${type}`);
    return value;
  };
  let auth: IronicConfig['auth'];
  if (type === 'none') auth = { type };
  else if (type === 'http_basic') {
    const username = required('IRONIC_USERNAME').trim();
    if (username.includes(':')) throw configError('IRONIC_USERNAME', 'must not contain ":" (HTTP basic auth)');
    auth = { type, username, password: required('IRONIC_PASSWORD') };
  } else if (type === 'token') auth = { type, token: required('IRONIC_TOKEN').trim() };
  else if (type === 'keystone') auth = { type };
  else throw configError('IRONIC_AUTH_TYPE', `must be "none", "http_basic", "token" or "keystone", not ${JSON.stringify(type)}`);
  return { url, auth, timeoutMs: durationVar(env, 'IRONIC_TIMEOUT', '30s') };
}

/**
 * The bootstrap admin token an operator chose: the admin's whole power, so no shorter than 32 characters (the
 * random one is 46). Whitespace inside would not survive `Authorization: Bearer <token>`.
 */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

function adminToken(value: string | null): string | null {
  if (value === null) return null;
  if (/\s/.test(value)) throw configError('LEASEHOLD_ADMIN_TOKEN', 'must not contain spaces or other whitespace');
  if (value.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw configError(
      'LEASEHOLD_ADMIN_TOKEN',
      `must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters (it has ${value.length}): a short token can be guessed. ` +
        'Unset it to have a random one made (saved to <data dir>/admin-token), or use e.g. `openssl rand -base64 32`',
    );
  }
  return value;
}

function webhookUrl(value: string | null): string | null {
  if (value === null) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw configError('LEASEHOLD_WEBHOOK_URL', `is not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw configError('LEASEHOLD_WEBHOOK_URL', 'must be http(s)');
  return url.toString();
}

/** The console's ws:// and wss:// URLs are derived from it: it must be an http(s) URL. */
function publicUrl(value: string | null): string | null {
  if (value === null) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw configError('LEASEHOLD_PUBLIC_URL', `is not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw configError('LEASEHOLD_PUBLIC_URL', 'must be http(s)');
  return value;
}

function parseRole(value: string): Config['role'] {
  if (value === 'api' || value === 'worker' || value === 'all') return value;
  throw configError('LEASEHOLD_ROLE (--role)', `must be "api", "worker" or "all", not ${JSON.stringify(value)}`);
}

/**
 * LEASEHOLD_MARK_CONCURRENCY: default 4. One standalone Ironic (one process, SQLite) does the same ≈ 35 node
 * PATCHes a second with 1, 2, 4, 8, 12 or 20 callers (measured on the 2-core machine); more callers only queue
 * inside Ironic, where Leasehold can no longer put a small lease's marks before a large one's. An Ironic with
 * several conductors and a database server may take more.
 */
function markConcurrency(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return 4;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 64) {
    throw configError('LEASEHOLD_MARK_CONCURRENCY', `must be an integer from 1 to 64, not ${JSON.stringify(value)}`);
  }
  return n;
}

function parsePort(value: string | undefined, name = 'LEASEHOLD_PORT'): number {
  if (value === undefined || value.trim() === '') return 8080;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw configError(name, `must be an integer from 0 to 65535, not ${JSON.stringify(value)}`);
  }
  return port;
}

/**
 * LEASEHOLD_NOTICE_OFFSETS: durations separated by commas ("24h,1h", the default), or "none". The older
 * LEASEHOLD_WEBHOOK_ENDING_SOON (one offset) is still read when the new setting is absent.
 */
function noticeOffsets(env: Env): number[] {
  const raw = env.LEASEHOLD_NOTICE_OFFSETS?.trim();
  if (raw === undefined || raw === '') {
    const legacy = env.LEASEHOLD_WEBHOOK_ENDING_SOON?.trim();
    return legacy ? [durationVar(env, 'LEASEHOLD_WEBHOOK_ENDING_SOON', legacy)] : [...DEFAULT_NOTICE_OFFSETS_MS];
  }
  if (raw.toLowerCase() === 'none') return [];
  const offsets = raw.split(',').map((part) => {
    const ms = parseDuration(part.trim(), 'LEASEHOLD_NOTICE_OFFSETS');
    if (ms <= 0) throw configError('LEASEHOLD_NOTICE_OFFSETS', 'every offset must be longer than zero');
    return ms;
  });
  if (offsets.length > MAX_NOTICE_OFFSETS) throw configError('LEASEHOLD_NOTICE_OFFSETS', `at most ${MAX_NOTICE_OFFSETS} offsets`);
  return normalizeOffsets(offsets, 'LEASEHOLD_NOTICE_OFFSETS');
}

function durationVar(env: Env, name: string, fallback: string): number {
  const ms = parseDuration(env[name]?.trim() || fallback, name);
  if (ms <= 0) throw configError(name, 'must be longer than zero');
  return ms;
}

/**
 * The simulated inventory's JSON, or a file holding it: a path, or `@path` (an environment variable holds ≈ 128 KiB
 * at most, a few hundred nodes). JSON starts with `[` (or `{`, which the parser refuses with a clear message).
 */
function simulatedNodes(value: string | null): string | null {
  if (value === null || value.startsWith('[') || value.startsWith('{')) return value;
  try {
    return readFileSync(value.startsWith('@') ? value.slice(1) : value, 'utf8');
  } catch (err) {
    throw configError('LEASEHOLD_SIMULATED_NODES', `names a file that cannot be read: ${(err as Error).message}`);
  }
}

function configError(name: string, message: string): InvalidRequestError {
  return new InvalidRequestError(`${name} ${message}`, { details: { variable: name } });
}
