import { homedir } from 'node:os';
import { join } from 'node:path';

/** The environment a run sees: process.env in production, exactly what a test gives otherwise. */
export type Env = Readonly<Record<string, string | undefined>>;

/** An empty variable counts as unset: `LEASEHOLD_TOKEN= leasehold ...` is how people clear one. */
export function envValue(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** `$HOME`, else the account's home directory. */
export function homeDir(env: Env): string {
  return envValue(env, 'HOME') ?? homedir();
}

/** `$XDG_CONFIG_HOME`, else `~/.config` (the XDG base directory rules). */
export function configHome(env: Env): string {
  return envValue(env, 'XDG_CONFIG_HOME') ?? join(homeDir(env), '.config');
}

/** `$XDG_CACHE_HOME`, else `~/.cache`. */
export function cacheHome(env: Env): string {
  return envValue(env, 'XDG_CACHE_HOME') ?? join(homeDir(env), '.cache');
}
