import type { Command } from 'commander';
import type { Me } from '../api-types.js';
import { ApiClient } from '../client.js';
import { configPath, DEFAULT_URL, removeCredentials, writeCredentials } from '../config.js';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { renderFields } from '../output.js';

function describe(me: Me): string {
  const project = me.project ? ` in project ${me.project.name}` : '';
  return `${me.user.name} (${me.user.role}${project})`;
}

/** `leasehold login | logout | whoami`: the saved credentials and who they belong to. */
export function registerAuthCommands(program: Command, ctx: CliContext): void {
  program
    .command('login')
    .summary('check and save a server URL and token')
    .description('check a server URL and token, then save them for later commands')
    .addHelpText(
      'after',
      [
        '',
        'Takes the global --url and --token (or LEASEHOLD_URL / LEASEHOLD_TOKEN; the URL defaults to',
        `${DEFAULT_URL}), checks them with GET /v1/me and writes them to the config file`,
        '($LEASEHOLD_CONFIG, else $XDG_CONFIG_HOME/leasehold/config.json, else ~/.config/leasehold/config.json),',
        'readable by you only (mode 0600).',
        '',
        'Example:',
        '  leasehold login --url https://leasehold.example.org --token lh_...',
      ].join('\n'),
    )
    .action(async () => {
      const env = ctx.io.env;
      const url = ctx.globals.url?.trim() || env.LEASEHOLD_URL?.trim() || DEFAULT_URL;
      const token = ctx.globals.token?.trim() || env.LEASEHOLD_TOKEN?.trim();
      if (!token) throw new UsageError('login needs a token: leasehold login --url URL --token TOKEN');
      ctx.secrets.add(token);
      const client = new ApiClient(url, token);
      const me = await client.get<Me>('/v1/me');
      const path = configPath(env);
      await writeCredentials(path, { url, token });
      ctx.print(me, () => `Logged in to ${client.displayUrl} as ${describe(me)}.`);
      ctx.note(`Saved the URL and token to ${path}`);
    });

  program
    .command('logout')
    .summary('forget the saved URL and token')
    .description('remove the saved URL and token (the token itself stays valid: `leasehold token revoke` ends it)')
    .action(async () => {
      const path = configPath(ctx.io.env);
      const removed = await removeCredentials(path);
      ctx.note(removed ? `Removed ${path}` : `Not logged in (no ${path})`);
    });

  program
    .command('whoami')
    .summary('show who the current token belongs to')
    .description('show the user and project the current token belongs to, and where the settings came from')
    .action(async () => {
      const settings = await ctx.settings();
      const client = new ApiClient(settings.url, settings.token);
      const me = await client.get<Me>('/v1/me');
      ctx.print(me, () =>
        renderFields([
          ['user', me.user.name],
          ['user id', me.user.id],
          ['role', me.user.role],
          ['project', me.project ? `${me.project.name} (${me.project.id})` : null],
          ['server', `${client.displayUrl} (from ${settings.urlSource})`],
          ['token from', settings.tokenSource ?? null],
        ]),
      );
    });
}
