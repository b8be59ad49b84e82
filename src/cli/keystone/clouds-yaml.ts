import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { configHome, envValue, homeDir, type Env } from '../env.js';
import { UsageError } from '../errors.js';
import { authKey, type AuthKey, type CloudOptions } from './cloud-options.js';

/** Where `./clouds.yaml` and the system-wide files are: the real ones in production, temporary ones in tests. */
export interface CloudFilePlaces {
  /** The directory `./clouds.yaml` is relative to. */
  readonly cwd: string;
  /** openstacksdk's site-wide directory, `/etc/openstack`. */
  readonly siteConfigDirs: readonly string[];
}

export const DEFAULT_SITE_CONFIG_DIRS: readonly string[] = ['/etc/openstack'];

/** A named cloud read from the first `clouds.yaml` found, with the first `secure.yaml` found merged over it. */
export interface LoadedCloud {
  readonly name: string;
  readonly options: CloudOptions;
  readonly file: string;
  readonly secureFile: string | undefined;
}

/** openstacksdk reads `clouds.yaml`, `clouds.yml` or `clouds.json`, in that order, in each directory. */
const SUFFIXES = ['.yaml', '.yml', '.json'] as const;

/**
 * The directories openstacksdk searches, in its order: the current directory, the user's (`$XDG_CONFIG_HOME/openstack`
 * and `~/.config/openstack`), the site's (`/etc/openstack`).
 */
export function cloudSearchDirs(env: Env, places: CloudFilePlaces): string[] {
  const dirs = [places.cwd, join(configHome(env), 'openstack'), join(homeDir(env), '.config', 'openstack'), ...places.siteConfigDirs];
  return [...new Set(dirs)];
}

/** The candidate files for `clouds` or `secure`: `$OS_CLIENT_CONFIG_FILE` / `$OS_CLIENT_SECURE_FILE` first, as openstacksdk. */
function candidates(base: 'clouds' | 'secure', env: Env, places: CloudFilePlaces): string[] {
  const explicit = envValue(env, base === 'clouds' ? 'OS_CLIENT_CONFIG_FILE' : 'OS_CLIENT_SECURE_FILE');
  const found = cloudSearchDirs(env, places).flatMap((dir) => SUFFIXES.map((suffix) => join(dir, `${base}${suffix}`)));
  return explicit ? [explicit, ...found] : found;
}

type Tree = Readonly<Record<string, unknown>>;

/** The first candidate that exists, parsed; as openstacksdk, later files are not merged in. */
async function firstFile(paths: readonly string[]): Promise<{ path: string; tree: Tree } | undefined> {
  for (const path of paths) {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') continue;
      throw new UsageError(`cannot read ${path}: ${(err as Error).message}`);
    }
    return { path, tree: parseTree(path, text) };
  }
  return undefined;
}

function parseTree(path: string, text: string): Tree {
  let parsed: unknown;
  try {
    // Every scalar a string: a project id of digits and one "e" is not a float, a leading zero is kept.
    parsed = parse(text, { schema: 'failsafe' });
  } catch (err) {
    // Only the first line ("... at line 3, column 11:"): the rest quotes the file, which may hold a password.
    const first = ((err as Error).message.split('\n')[0] ?? '').replace(/:$/, '');
    throw new UsageError(`${path} is not valid YAML: ${first}`);
  }
  if (parsed === null || parsed === undefined || parsed === '') return {};
  if (!isTree(parsed)) throw new UsageError(`${path} is not a YAML mapping with a "clouds:" key`);
  return parsed;
}

function isTree(value: unknown): value is Tree {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function cloudsOf(path: string, tree: Tree): Tree {
  const clouds = tree.clouds ?? {};
  if (!isTree(clouds)) throw new UsageError(`"clouds" in ${path} is not a mapping of cloud names`);
  return clouds;
}

/** secure.yaml's values win over clouds.yaml's, key by key, at any depth (openstacksdk's merge). */
function merge(base: Tree, over: Tree): Tree {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isTree(current) && isTree(value) ? merge(current, value) : value;
  }
  return out;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** A cloud's mapping as CloudOptions: `auth:` keys normalised, the first of `regions:` when there is no `region_name`. */
function optionsOf(cloud: Tree): CloudOptions {
  const auth: Partial<Record<AuthKey, string>> = {};
  const rawAuth = isTree(cloud.auth) ? cloud.auth : {};
  for (const [raw, value] of Object.entries(rawAuth)) {
    const key = authKey(raw);
    const v = text(value);
    // Both `tenant_name` and `project_name` given: the modern one wins whatever the order in the file.
    if (key && v !== undefined && !(raw.startsWith('tenant') && auth[key] !== undefined)) auth[key] = v;
  }
  const regions = Array.isArray(cloud.regions) ? cloud.regions : [];
  const firstRegion = regions[0];
  const region = text(firstRegion) ?? (isTree(firstRegion) ? text(firstRegion.name) : undefined);
  return {
    authType: text(cloud.auth_type ?? cloud['auth-type']),
    auth,
    interface: text(cloud.interface),
    regionName: text(cloud.region_name ?? cloud['region-name']) ?? region,
    cacert: text(cloud.cacert),
  };
}

/**
 * The cloud called `name`, from the first `clouds.yaml` found with the first `secure.yaml` found merged in.
 * Exit 2 (UsageError) when there is no `clouds.yaml`, or it does not name the cloud (the message lists the clouds).
 */
export async function loadCloud(name: string, env: Env, places: CloudFilePlaces): Promise<LoadedCloud> {
  const cloudsFiles = candidates('clouds', env, places);
  const clouds = await firstFile(cloudsFiles);
  if (!clouds) {
    const dirs = cloudSearchDirs(env, places).join(', ');
    throw new UsageError(`cloud "${name}": no clouds.yaml found (looked in ${dirs}; OS_CLIENT_CONFIG_FILE names another)`);
  }
  const secure = await firstFile(candidates('secure', env, places));
  const known = cloudsOf(clouds.path, clouds.tree);
  const mine = known[name];
  if (!isTree(mine)) {
    const names = Object.keys(known);
    const list = names.length > 0 ? `the clouds there: ${names.join(', ')}` : 'it names no clouds';
    throw new UsageError(`cloud "${name}" is not in ${clouds.path}; ${list}`);
  }
  const secureCloud = secure ? cloudsOf(secure.path, secure.tree)[name] : undefined;
  const merged = isTree(secureCloud) ? merge(mine, secureCloud) : mine;
  return {
    name,
    options: optionsOf(merged),
    file: clouds.path,
    secureFile: isTree(secureCloud) ? secure?.path : undefined,
  };
}
