import type { Command } from 'commander';
import type { Me } from '../api-types.js';
import { ApiClient } from '../client.js';
import { configPath, DEFAULT_URL, removeCredentials, writeCredentials, type KeystoneSettings } from '../config.js';
import type { CliContext } from '../context.js';
import { envValue } from '../env.js';
import { UsageError } from '../errors.js';
import { leaseholdUrlFromCatalog } from '../keystone/catalog.js';
import { hasEnvironmentCredentials, secretsOf, withSecretsFromEnvironment } from '../keystone/cloud-options.js';
import { loadCloud } from '../keystone/clouds-yaml.js';
import type { IssuedToken } from '../keystone/keystone-client.js';
import type { KeystoneSession } from '../keystone/keystone-session.js';
import { tokenCacheDir } from '../keystone/token-cache.js';
import { renderFields } from '../output.js';

function describe(me: Me): string {
  const project = me.project ? ` in project ${me.project.name}` : '';
  return `${me.user.name} (${me.user.role}${project})`;
}

/** Who Keystone says the token is for: `alice in project physics-lab`, `admin, system scope`. */
function keystoneHolder(issued: IssuedToken): string {
  const user = issued.user.name ?? issued.user.id;
  if (issued.project) return `${user} in project ${issued.project.name ?? issued.project.id}`;
  return issued.system ? `${user}, system scope` : `${user}, no project`;
}

/** `cloud mycloud from --os-cloud (/home/ann/.config/openstack/clouds.yaml + secure.yaml)`, or `OS_* variables`. */
function keystoneSource(keystone: KeystoneSettings): string {
  const cloud = keystone.cloud;
  if (!cloud) return keystone.source;
  const files = cloud.secureFile ? `${cloud.file} + ${cloud.secureFile}` : cloud.file;
  return `cloud ${cloud.name} from ${keystone.source} (${files})`;
}

function keystoneRows(keystone: KeystoneSettings, session: KeystoneSession): [string, string | null][] {
  const held = session.current;
  const how = session.origin === 'cache' ? 'cached token' : 'new token';
  return [
    ['token from', `Keystone, ${session.request.method} of ${session.request.identity}; ${keystoneSource(keystone)}`],
    ['keystone', session.request.authUrl],
    ['keystone token', held ? `${how}, ${keystoneHolder(held)}, expires ${held.expiresAt}` : null],
  ];
}

const LOGIN_HELP = `
With a token: takes the global --url and --token (or LEASEHOLD_URL / LEASEHOLD_TOKEN; the URL defaults to
${DEFAULT_URL}), checks them with GET /v1/me and writes them to the config file ($LEASEHOLD_CONFIG, else
$XDG_CONFIG_HOME/leasehold/config.json, else ~/.config/leasehold/config.json), readable by you only (mode 0600).

With Keystone: --os-cloud NAME (or OS_CLOUD) names a cloud of clouds.yaml (./clouds.yaml,
$XDG_CONFIG_HOME/openstack/, ~/.config/openstack/, /etc/openstack/; secure.yaml merged over it from the same
places). login gets a token from Keystone, finds Leasehold (--url, LEASEHOLD_URL, else the catalog: a
"leasehold" service, else the "baremetal" endpoint without its /baremetal), checks it with GET /v1/me and saves
the cloud's name (and the URL if you gave one), never a password or token. Later commands get their token from
Keystone themselves and cache it in $XDG_CACHE_HOME/leasehold/ (else ~/.cache/leasehold/, mode 0600) until a
minute before it expires. With the OS_* variables there is nothing to save: every command reads them.

Examples:
  leasehold login --url https://leasehold.example.org --token lh_...
  leasehold login --os-cloud mycloud`;

/** `leasehold login | logout | whoami`: the saved credentials and who they belong to. */
export function registerAuthCommands(program: Command, ctx: CliContext): void {
  program
    .command('login')
    .summary('check and save a server URL and token, or a cloud of clouds.yaml')
    .description('check a server URL and token (or Keystone credentials of clouds.yaml), then save them for later commands')
    .addHelpText('after', LOGIN_HELP)
    .action(async () => {
      const env = ctx.io.env;
      const flagToken = ctx.globals.token?.trim() || undefined;
      const flagCloud = ctx.globals.osCloud?.trim() || undefined;
      if (flagToken && flagCloud) throw new UsageError('login takes --token or --os-cloud, not both');
      const token = flagToken ?? (flagCloud ? undefined : envValue(env, 'LEASEHOLD_TOKEN'));
      const cloud = flagCloud ?? (token ? undefined : envValue(env, 'OS_CLOUD'));
      if (token) await loginWithToken(ctx, token);
      else if (cloud) await loginWithCloud(ctx, cloud);
      else {
        const variables = hasEnvironmentCredentials(env)
          ? ' (the OS_* variables need no login: every command reads them)'
          : '';
        throw new UsageError(
          `login needs a token or a cloud: leasehold login --url URL --token TOKEN, or leasehold login --os-cloud NAME${variables}`,
        );
      }
    });

  program
    .command('logout')
    .summary('forget the saved URL and token, and cached Keystone tokens')
    .description(
      'remove the saved URL and token or cloud name, and the cached Keystone tokens (a token itself stays valid: ' +
        '`leasehold token revoke` ends a Leasehold token; a Keystone token expires)',
    )
    .action(async () => {
      const path = configPath(ctx.io.env);
      const removed = await removeCredentials(path);
      ctx.note(removed ? `Removed ${path}` : `Not logged in (no ${path})`);
      const cache = ctx.tokenCache();
      const cleared = await cache.clear();
      if (cleared > 0) ctx.note(`Removed ${cleared} cached Keystone token${cleared === 1 ? '' : 's'} from ${cache.dir}`);
    });

  program
    .command('whoami')
    .summary('show who the current token belongs to')
    .description('show the user and project the current token belongs to, and where the settings came from')
    .action(async () => {
      const { client, settings, urlFrom, keystone } = await ctx.connection();
      const me = await client.get<Me>('/v1/me');
      ctx.print(me, () =>
        renderFields([
          ['user', me.user.name],
          ['user id', me.user.id],
          ['role', me.user.role],
          ['project', me.project ? `${me.project.name} (${me.project.id})` : null],
          ['server', `${client.displayUrl} (from ${urlFrom})`],
          ...(settings.keystone && keystone
            ? keystoneRows(settings.keystone, keystone)
            : [['token from', settings.tokenSource ?? null] as [string, string | null]]),
        ]),
      );
    });
}

async function loginWithToken(ctx: CliContext, token: string): Promise<void> {
  const env = ctx.io.env;
  const url = ctx.globals.url?.trim() || envValue(env, 'LEASEHOLD_URL') || DEFAULT_URL;
  ctx.secrets.add(token);
  const client = new ApiClient(url, token);
  const me = await client.get<Me>('/v1/me');
  const path = configPath(env);
  await writeCredentials(path, { url, token });
  ctx.print(me, () => `Logged in to ${client.displayUrl} as ${describe(me)}.`);
  ctx.note(`Saved the URL and token to ${path}`);
}

/** Checks the cloud's credentials with a new Keystone token and Leasehold with GET /v1/me; saves the cloud's name. */
async function loginWithCloud(ctx: CliContext, name: string): Promise<void> {
  const env = ctx.io.env;
  const cloud = await loadCloud(name, env, ctx.cloudFilePlaces);
  const options = withSecretsFromEnvironment(cloud.options, env);
  for (const secret of secretsOf(options)) ctx.secrets.add(secret);
  const session = ctx.keystoneSession(options);
  // Never the cache: login is where wrong credentials must show.
  const issued = await session.fresh();
  const givenUrl = ctx.globals.url?.trim() || envValue(env, 'LEASEHOLD_URL');
  const url =
    givenUrl ?? leaseholdUrlFromCatalog(issued.catalog, { interface: options.interface, region: options.regionName }).url;
  const client = new ApiClient(url, session);
  const me = await client.get<Me>('/v1/me');
  const path = configPath(env);
  await writeCredentials(path, { cloud: name, url: givenUrl });
  ctx.print(me, () =>
    [
      `Logged in to ${client.displayUrl} as ${describe(me)}.`,
      `Keystone ${session.request.authUrl}: ${keystoneHolder(session.current ?? issued)} (cloud ${name}, ${cloud.file}).`,
    ].join('\n'),
  );
  ctx.note(
    `Saved the cloud name ${name}${givenUrl ? ' and the URL' : ''} to ${path} (no password or token); ` +
      `Keystone tokens are cached in ${tokenCacheDir(env)}`,
  );
}
