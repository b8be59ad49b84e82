import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheHome, type Env } from '../env.js';
import type { CatalogService } from './catalog.js';
import type { IssuedToken, Named } from './keystone-client.js';

const PREFIX = 'keystone-';
const FORMAT = 1;

/** `$XDG_CACHE_HOME/leasehold`, else `~/.cache/leasehold`. */
export function tokenCacheDir(env: Env): string {
  return join(cacheHome(env), 'leasehold');
}

function named(value: unknown): Named | undefined {
  const r = value as Partial<Named> | null | undefined;
  return r && typeof r.id === 'string' ? { id: r.id, name: typeof r.name === 'string' ? r.name : undefined } : undefined;
}

/**
 * Keystone tokens between commands, so a shell loop pays one Keystone round trip, not one per command. One file per
 * identity (`keystone-<sha256 of the auth URL and identity fields>.json`), mode 0600 in a 0700 directory, holding
 * the token, its expiry, the user and project and the two catalog services the CLI uses: never a password or an
 * application credential's secret. A cache: an unreadable or damaged entry is a miss, a failed write is ignored.
 */
export class TokenCache {
  constructor(readonly dir: string) {}

  path(key: string): string {
    return join(this.dir, `${PREFIX}${key}.json`);
  }

  async read(key: string): Promise<IssuedToken | undefined> {
    try {
      const entry = JSON.parse(await readFile(this.path(key), 'utf8')) as Record<string, unknown>;
      const user = named(entry.user);
      if (entry.format !== FORMAT || typeof entry.token !== 'string' || typeof entry.expires_at !== 'string' || !user) {
        return undefined;
      }
      if (Number.isNaN(Date.parse(entry.expires_at))) return undefined;
      return {
        token: entry.token,
        expiresAt: entry.expires_at,
        user,
        project: named(entry.project),
        system: entry.system === true,
        catalog: Array.isArray(entry.catalog) ? (entry.catalog as CatalogService[]) : [],
      };
    } catch {
      return undefined;
    }
  }

  /** Written to a 0600 temporary file renamed over the entry: never briefly readable by others, never half written. */
  async write(key: string, about: { readonly authUrl: string; readonly identity: string }, token: IssuedToken): Promise<void> {
    const entry = {
      format: FORMAT,
      auth_url: about.authUrl,
      identity: about.identity,
      token: token.token,
      expires_at: token.expiresAt,
      user: token.user,
      project: token.project ?? null,
      system: token.system,
      catalog: token.catalog,
    };
    const target = this.path(key);
    const temporary = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      await writeFile(temporary, `${JSON.stringify(entry)}\n`, { mode: 0o600, flag: 'wx' });
      await rename(temporary, target);
    } catch {
      // A read-only home costs a Keystone round trip per command, not the command itself.
      await rm(temporary, { force: true }).catch(() => undefined);
    }
  }

  async remove(key: string): Promise<void> {
    await rm(this.path(key), { force: true }).catch(() => undefined);
  }

  /** Removes every cached Keystone token (what `leasehold logout` does); returns how many there were. */
  async clear(): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return 0;
    }
    // With any temporary file a killed command left behind: it may hold a token too.
    const mine = names.filter((name) => name.startsWith(PREFIX));
    await Promise.all(mine.map((name) => rm(join(this.dir, name), { force: true })));
    return mine.filter((name) => name.endsWith('.json')).length;
  }
}
