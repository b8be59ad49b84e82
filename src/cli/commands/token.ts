import { Option, type Command } from 'commander';
import type { NewToken, Token } from '../api-types.js';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { renderFields, renderTable } from '../output.js';
import { printList } from '../paging.js';
import { parsePositiveDuration, parseTimestamp } from '../parsers.js';
import { RefKind, resolveId } from '../resolve-ref.js';
import { listOptions, type ListFlags } from './list-options.js';

function tokenStatus(t: Token, now: Date): string {
  if (t.revoked_at) return 'revoked';
  if (t.expires_at && Date.parse(t.expires_at) <= now.getTime()) return 'expired';
  return 'active';
}

function tokenTable(tokens: Token[], now: Date): string {
  return renderTable(
    ['ID', 'PREFIX', 'USER ID', 'STATUS', 'EXPIRES AT', 'DESCRIPTION'],
    tokens.map((t) => [t.id, t.prefix, t.user_id, tokenStatus(t, now), t.expires_at ?? 'never', t.description]),
  );
}

/** `leasehold token ...`: API tokens; the value exists only in the answer to `create` (the server keeps a hash). */
export function registerTokenCommands(program: Command, ctx: CliContext): void {
  const token = program.command('token').description('issue, list and revoke API tokens').helpCommand(false);

  token
    .command('create')
    .description('issue a token for a user; its value is printed once and cannot be shown again')
    .requiredOption('--user <user>', 'the user the token acts as: id, name or id prefix')
    .option('--description <text>', 'what the token is for, e.g. "CI pipeline"')
    .addOption(
      new Option('--expires-at <time>', 'expiry time, RFC 3339 (e.g. 2030-01-31T18:00:00Z)')
        .argParser(parseTimestamp)
        .conflicts('expiresIn'),
    )
    .addOption(new Option('--expires-in <duration>', 'expiry from now, e.g. 30d, 12h, P1W').argParser(parsePositiveDuration))
    .addHelpText(
      'after',
      '\nWithout --expires-at or --expires-in the token does not expire.\n\nExample:\n  leasehold token create --user alice --description "CI" --expires-in 90d',
    )
    .action(async (flags: { user: string; description?: string; expiresAt?: string; expiresIn?: number }) => {
      const expiresAt =
        flags.expiresIn !== undefined ? new Date(ctx.now().getTime() + flags.expiresIn).toISOString() : flags.expiresAt;
      const client = await ctx.client();
      const created = await client.post<NewToken>('/v1/tokens', {
        user_id: await resolveId(ctx, RefKind.User, flags.user),
        description: flags.description,
        expires_at: expiresAt,
      });
      ctx.secrets.add(created.token);
      if (ctx.json) {
        ctx.print(created, () => '');
        return;
      }
      ctx.out(
        renderFields([
          ['token', created.token],
          ['id', created.id],
          ['user id', created.user_id],
          ['description', created.description],
          ['expires at', created.expires_at ?? 'never'],
          ['created at', created.created_at],
        ]),
      );
      // On stderr so that `leasehold token create ... > file` still shows it to the person at the terminal.
      ctx.note('Save this token now: it is not shown again.');
    });

  listOptions(token.command('list').description('list tokens (ids and prefixes, never values)'))
    .option('--user <user>', 'only the tokens of this user (id, name or id prefix)')
    .action(async (flags: ListFlags & { user?: string }) => {
      await printList<Token>(
        ctx,
        { path: '/v1/tokens', key: 'tokens', query: { user_id: await resolveId(ctx, RefKind.User, flags.user) }, all: flags.all, limit: flags.limit, marker: flags.marker },
        (tokens) => tokenTable(tokens, ctx.now()),
      );
    });

  token
    .command('revoke')
    .description('revoke a token: it stops working at once')
    .argument('<token-id>', 'token id or id prefix (see `leasehold token list`), not the token value')
    .action(async (ref: string) => {
      if (ref.startsWith('lh_')) {
        // Looks like a token value: refuse, so a secret does not end up in a URL and the server's logs.
        throw new UsageError('give the token id (see `leasehold token list`), not the token value');
      }
      const client = await ctx.client();
      const id = await resolveId(ctx, RefKind.Token, ref);
      await client.delete(`/v1/tokens/${encodeURIComponent(id)}`);
      if (!ctx.json) ctx.out(`Revoked token ${id}`);
    });
}
