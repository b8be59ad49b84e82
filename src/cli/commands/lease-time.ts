import type { Command } from 'commander';
import type { ExtensionQuote, Lease } from '../api-types.js';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { renderFields } from '../output.js';
import { RefKind, resolveId } from '../resolve-ref.js';
import { leaseView } from './lease.js';
import { autoRenewBody, autoRenewOptions, autoRenewText, type AutoRenewFlags } from './lease-time-view.js';

const leasePath = (id: string) => `/v1/leases/${encodeURIComponent(id)}`;

function quoteView(q: ExtensionQuote): string {
  const limit = q.limited_by ? `${q.limited_by.rule}${q.limited_by.node_name || q.limited_by.node_id ? ` (node ${q.limited_by.node_name ?? q.limited_by.node_id})` : ''}` : null;
  return renderFields([
    ['end', q.end],
    ['extendable', q.extendable ? 'yes' : 'no'],
    ['latest end', q.latest_end ?? 'no limit'],
    ['at most', q.max_extension ? `+${q.max_extension}` : null],
    ['limited by', limit],
    ['window', q.window.open ? 'open' : `closed until ${q.window.opens_at}`],
    ['auto-renew', autoRenewText(q)],
  ]);
}

/**
 * A lease's time (issue 16): `lease extension` (how far it could be extended now, and what limits it) and
 * `lease renew` (auto-renew on or off). Registered after `registerLeaseCommands`, onto its command group.
 */
export function registerLeaseTimeCommands(program: Command, ctx: CliContext): void {
  const lease = program.commands.find((c) => c.name() === 'lease');
  if (!lease) throw new Error('register the lease commands first');

  lease
    .command('extension')
    .description('show how far a lease could be extended now, and which rule or booking limits it')
    .argument('<lease>', 'lease id, name or id prefix')
    .action(async (ref: string) => {
      const client = await ctx.client();
      const id = await resolveId(ctx, RefKind.Lease, ref);
      const quote = await client.get<ExtensionQuote>(`${leasePath(id)}/extension`);
      ctx.print(quote, () => quoteView(quote));
    });

  autoRenewOptions(lease.command('renew').description("let the engine extend a lease step by step while its nodes stay free and the offers allow, or stop it (--off)"))
    .argument('<lease>', 'lease id, name or id prefix')
    .option('--off', 'stop renewing')
    .addHelpText('after', '\nExamples:\n  leasehold lease renew 5f3c... --auto-renew 1d --renew-max-total 14d\n  leasehold lease renew 5f3c... --off')
    .action(async (ref: string, flags: AutoRenewFlags & { off?: boolean }) => {
      const body = autoRenewBody(flags);
      if (flags.off && body) throw new UsageError('give --off or --auto-renew <step>, not both');
      if (!flags.off && !body) throw new UsageError('give --auto-renew <step> with --renew-until or --renew-max-total, or --off');
      const client = await ctx.client();
      const id = await resolveId(ctx, RefKind.Lease, ref);
      const updated = await client.patch<Lease>(leasePath(id), { auto_renew: flags.off ? null : body });
      ctx.print(updated, () => leaseView(updated, ctx.now()));
    });
}
