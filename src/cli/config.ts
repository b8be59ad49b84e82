import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { configHome, envValue, type Env } from './env.js';
import { UsageError } from './errors.js';
import { hasEnvironmentCredentials, optionsFromEnvironment, withSecretsFromEnvironment, type CloudOptions } from './keystone/cloud-options.js';
import { DEFAULT_SITE_CONFIG_DIRS, loadCloud, type CloudFilePlaces, type LoadedCloud } from './keystone/clouds-yaml.js';

export type { Env } from './env.js';

export const DEFAULT_URL = 'http://127.0.0.1:8080';

/**
 * What `leasehold login` saves: a server URL and its token, or the name of a cloud of `clouds.yaml` (never a
 * Keystone password or token) with the URL only when one was given.
 */
export type SavedCredentials =
  | { readonly url: string; readonly token: string; readonly cloud?: undefined }
  | { readonly cloud: string; readonly url: string | undefined; readonly token?: undefined };

/** Where a setting came from; shown by `whoami` so precedence surprises are easy to debug. */
export type SettingSource =
  | '--url'
  | '--token'
  | '--os-cloud'
  | 'LEASEHOLD_URL'
  | 'LEASEHOLD_TOKEN'
  | 'OS_CLOUD'
  | 'OS_* variables'
  | 'config file'
  | 'Keystone catalog'
  | 'default';

/** Keystone credentials: the CLI gets its token from Keystone with them. */
export interface KeystoneSettings {
  readonly options: CloudOptions;
  readonly source: SettingSource;
  /** The cloud of clouds.yaml they came from; undefined for the OS_* variables. */
  readonly cloud: LoadedCloud | undefined;
}

export interface ClientSettings {
  /** Undefined when it is to be found in the Keystone token's catalog (urlSource 'Keystone catalog'). */
  readonly url: string | undefined;
  readonly urlSource: SettingSource;
  /** A Leasehold token given as such (--token, LEASEHOLD_TOKEN, a saved login); undefined with Keystone credentials. */
  readonly token: string | undefined;
  readonly tokenSource: SettingSource | undefined;
  readonly keystone: KeystoneSettings | undefined;
  readonly configPath: string;
}

export interface SettingFlags {
  readonly url?: string | undefined;
  readonly token?: string | undefined;
  readonly osCloud?: string | undefined;
}

/** `$LEASEHOLD_CONFIG`, else `$XDG_CONFIG_HOME/leasehold/config.json`, else `~/.config/leasehold/config.json`. */
export function configPath(env: Env): string {
  const explicit = envValue(env, 'LEASEHOLD_CONFIG');
  if (explicit) return explicit;
  return join(configHome(env), 'leasehold', 'config.json');
}

/** The saved credentials, or undefined when nobody logged in. A damaged file is an error, not silently ignored. */
export async function readCredentials(path: string): Promise<SavedCredentials | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read the config file ${path}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError(`the config file ${path} is not valid JSON; fix it or run \`leasehold logout\` to remove it`);
  }
  const record = (parsed ?? {}) as Record<string, unknown>;
  const url = typeof record.url === 'string' && record.url !== '' ? record.url : undefined;
  if (typeof record.cloud === 'string' && record.cloud !== '') return { cloud: record.cloud, url };
  const token = typeof record.token === 'string' && record.token !== '' ? record.token : undefined;
  if (!url || !token) {
    throw new UsageError(`the config file ${path} lacks "url" or "token"; run \`leasehold login\` again`);
  }
  return { url, token };
}

/**
 * Writes the credentials readable by the owner only: a temporary file created with mode 0600 renamed over the
 * target, so the token is never briefly world-readable and a crash never leaves half a file.
 */
export async function writeCredentials(path: string, credentials: SavedCredentials): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const saved =
      credentials.cloud === undefined
        ? { url: credentials.url, token: credentials.token }
        : { cloud: credentials.cloud, url: credentials.url };
    await writeFile(temporary, `${JSON.stringify(saved, null, 2)}\n`, {
      mode: 0o600,
      flag: 'wx',
    });
    await rename(temporary, path);
  } catch (err) {
    await rm(temporary, { force: true });
    throw new UsageError(`cannot write the config file ${path}: ${(err as Error).message}`);
  }
}

/** Removes the saved credentials; false when there were none. */
export async function removeCredentials(path: string): Promise<boolean> {
  try {
    await rm(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new UsageError(`cannot remove the config file ${path}: ${(err as Error).message}`);
  }
}

/** Where `./clouds.yaml` is and which site directories to search: the process's own unless a test says. */
export const PROCESS_PLACES = (): CloudFilePlaces => ({ cwd: process.cwd(), siteConfigDirs: DEFAULT_SITE_CONFIG_DIRS });

async function keystoneFrom(name: string, source: SettingSource, env: Env, places: CloudFilePlaces): Promise<KeystoneSettings> {
  const cloud = await loadCloud(name, env, places);
  return { options: withSecretsFromEnvironment(cloud.options, env), source, cloud };
}

/**
 * Credentials, highest first: `--token`, `--os-cloud` (+ clouds.yaml), `LEASEHOLD_TOKEN`, `OS_CLOUD` (+ clouds.yaml),
 * the `OS_*` variables (when OS_AUTH_URL is set), the file `leasehold login` wrote (a token, or a cloud's name).
 * The URL: `--url` > `LEASEHOLD_URL` > the saved one > with Keystone credentials the token's catalog, else the
 * default. A saved token is used only with its own saved URL, and a saved URL with Keystone credentials only when
 * they are the saved cloud. The config file is read only when a flag or variable does not already decide both.
 */
export async function resolveSettings(
  flags: SettingFlags,
  env: Env,
  places: CloudFilePlaces = PROCESS_PLACES(),
): Promise<ClientSettings> {
  const path = configPath(env);
  const flagUrl = flags.url?.trim() || undefined;
  const flagToken = flags.token?.trim() || undefined;
  const flagCloud = flags.osCloud?.trim() || undefined;
  const envUrl = envValue(env, 'LEASEHOLD_URL');
  const envToken = envValue(env, 'LEASEHOLD_TOKEN');
  const envCloud = envValue(env, 'OS_CLOUD');
  const givenUrl = flagUrl ?? envUrl;
  const givenCredentials = flagToken ?? flagCloud ?? envToken ?? envCloud ?? (hasEnvironmentCredentials(env) || undefined);
  const saved = !givenUrl || !givenCredentials ? await readCredentials(path) : undefined;

  let token: string | undefined;
  let tokenSource: SettingSource | undefined;
  let keystone: KeystoneSettings | undefined;
  if (flagToken) [token, tokenSource] = [flagToken, '--token'];
  else if (flagCloud) keystone = await keystoneFrom(flagCloud, '--os-cloud', env, places);
  else if (envToken) [token, tokenSource] = [envToken, 'LEASEHOLD_TOKEN'];
  else if (envCloud) keystone = await keystoneFrom(envCloud, 'OS_CLOUD', env, places);
  else if (hasEnvironmentCredentials(env)) keystone = { options: optionsFromEnvironment(env), source: 'OS_* variables', cloud: undefined };
  else if (saved?.cloud !== undefined) keystone = await keystoneFrom(saved.cloud, 'config file', env, places);

  let url: string | undefined = DEFAULT_URL;
  let urlSource: SettingSource = 'default';
  if (flagUrl) [url, urlSource] = [flagUrl, '--url'];
  else if (envUrl) [url, urlSource] = [envUrl, 'LEASEHOLD_URL'];
  else if (keystone) {
    // The URL saved with a cloud belongs to that cloud; any other Keystone credentials find theirs in the catalog.
    const savedForThisCloud = saved?.cloud !== undefined && saved.cloud === keystone.cloud?.name ? saved.url : undefined;
    [url, urlSource] = savedForThisCloud ? [savedForThisCloud, 'config file'] : [undefined, 'Keystone catalog'];
  } else if (saved?.url) [url, urlSource] = [saved.url, 'config file'];

  // The saved token belongs to the saved server: never send it to another URL chosen by flag or variable.
  if (!token && !keystone && saved?.token !== undefined && url !== undefined && sameServer(saved.url, url)) {
    [token, tokenSource] = [saved.token, 'config file'];
  }

  return { url, urlSource, token, tokenSource, keystone, configPath: path };
}
function sameServer(a: string, b: string): boolean {
  const normal = (u: string) => u.trim().replace(/\/+$/, '').toLowerCase();
  return normal(a) === normal(b);
}
