import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from './errors.js';

export const DEFAULT_URL = 'http://127.0.0.1:8080';

export type Env = Readonly<Record<string, string | undefined>>;

/** What `leasehold login` saves. */
export interface SavedCredentials {
  readonly url: string;
  readonly token: string;
}

/** Where a setting came from; shown by `whoami` so precedence surprises are easy to debug. */
export type SettingSource = '--url' | '--token' | 'LEASEHOLD_URL' | 'LEASEHOLD_TOKEN' | 'config file' | 'default';

export interface ClientSettings {
  readonly url: string;
  readonly urlSource: SettingSource;
  readonly token: string | undefined;
  readonly tokenSource: SettingSource | undefined;
  readonly configPath: string;
}

/** An empty variable counts as unset: `LEASEHOLD_TOKEN= leasehold ...` is how people clear one. */
function envValue(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** `$LEASEHOLD_CONFIG`, else `$XDG_CONFIG_HOME/leasehold/config.json`, else `~/.config/leasehold/config.json`. */
export function configPath(env: Env): string {
  const explicit = envValue(env, 'LEASEHOLD_CONFIG');
  if (explicit) return explicit;
  const base = envValue(env, 'XDG_CONFIG_HOME') ?? join(envValue(env, 'HOME') ?? homedir(), '.config');
  return join(base, 'leasehold', 'config.json');
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
    await writeFile(temporary, `${JSON.stringify({ url: credentials.url, token: credentials.token }, null, 2)}\n`, {
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

/**
 * Precedence, per setting: `--url`/`--token` > `LEASEHOLD_URL`/`LEASEHOLD_TOKEN` > config file > default URL.
 * A saved token is used only with its own saved URL. The config file is read only when a flag or variable does not already decide both settings.
 */
export async function resolveSettings(flags: { url?: string; token?: string }, env: Env): Promise<ClientSettings> {
  const path = configPath(env);
  const flagUrl = flags.url?.trim() || undefined;
  const flagToken = flags.token?.trim() || undefined;
  const envUrl = envValue(env, 'LEASEHOLD_URL');
  const envToken = envValue(env, 'LEASEHOLD_TOKEN');
  const needFile = !(flagUrl ?? envUrl) || !(flagToken ?? envToken);
  const saved = needFile ? await readCredentials(path) : undefined;

  let url: string = DEFAULT_URL;
  let urlSource: SettingSource = 'default';
  if (flagUrl) [url, urlSource] = [flagUrl, '--url'];
  else if (envUrl) [url, urlSource] = [envUrl, 'LEASEHOLD_URL'];
  else if (saved) [url, urlSource] = [saved.url, 'config file'];

  let token: string | undefined;
  let tokenSource: SettingSource | undefined;
  if (flagToken) [token, tokenSource] = [flagToken, '--token'];
  else if (envToken) [token, tokenSource] = [envToken, 'LEASEHOLD_TOKEN'];
  // The saved token belongs to the saved server: never send it to another URL chosen by flag or variable.
  else if (saved && sameServer(saved.url, url)) [token, tokenSource] = [saved.token, 'config file'];

  return { url, urlSource, token, tokenSource, configPath: path };
}

function sameServer(a: string, b: string): boolean {
  const normal = (u: string) => u.trim().replace(/\/+$/, '').toLowerCase();
  return normal(a) === normal(b);
}
