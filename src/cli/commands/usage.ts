import { Option, type Command } from 'commander';
import { usageCsv, type UsageGroupBy } from '../../domain/usage.js';
import type { Usage } from '../api-types.js';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { renderTable } from '../output.js';
import { parseTimestamp } from '../parsers.js';
import { RefKind, resolveId } from '../resolve-ref.js';

/** The CLI spells it with a dash, as its other options; the API with an underscore. */
const BY: Record<string, UsageGroupBy> = { project: 'project', owner: 'owner', 'resource-class': 'resource_class', node: 'node' };

type UsageGroup = Usage['groups'][number];

const charges = (g: UsageGroup) => (g.charges.length === 0 ? '-' : g.charges.map((c) => `${c.amount} ${c.currency}`).join(', '));

function usageTable(u: Usage): string {
  const rows = u.groups.map((g) => [g.name ?? g.key ?? '(none)', g.node_hours.toFixed(2), String(g.allocations), charges(g)]);
  rows.push(['TOTAL', u.total.node_hours.toFixed(2), String(u.total.allocations), charges(u.total)]);
  const heading = u.group_by === 'resource_class' ? 'RESOURCE CLASS' : u.group_by.toUpperCase();
  return `${renderTable([heading, 'NODE-HOURS', 'ALLOCATIONS', 'CHARGES'], rows)}from ${u.from} to ${u.to} (as of ${u.as_of})\n`;
}

/** `leasehold usage`: node-hours actually used, clipped to a window, grouped; CSV for spreadsheets and billing. */
export function registerUsageCommand(program: Command, ctx: CliContext): void {
  program
    .command('usage')
    .description('node-hours actually used (yours; your nodes with --owner; everything for the operator)')
    .addOption(new Option('--from <time>', 'start of the window (RFC 3339; default: the start of this month, UTC)').argParser(parseTimestamp))
    .addOption(new Option('--to <time>', 'end of the window (RFC 3339; at most 366 days after --from; default: a month after --from)').argParser(parseTimestamp))
    .addOption(new Option('--by <grouping>', 'group by').choices(Object.keys(BY)).default('project'))
    .option('--project <project>', 'only this lessee project (id, name or id prefix)')
    .option('--owner <project>', 'only use of the nodes this project owns (id, name or id prefix)')
    .option('--csv', 'CSV (one line per group and currency) instead of a table')
    .addHelpText('after', '\nExamples:\n  leasehold usage --from 2030-01-01T00:00:00Z --to 2030-02-01T00:00:00Z --by node\n  leasehold usage --owner physics-lab --by project --csv > january.csv')
    .action(async (flags: { from?: string; to?: string; by: string; project?: string; owner?: string; csv?: boolean }) => {
      if (flags.from !== undefined && flags.to !== undefined && Date.parse(flags.to) <= Date.parse(flags.from)) throw new UsageError('--to must be after --from');
      const client = await ctx.client();
      const [project, owner] = [await resolveId(ctx, RefKind.Project, flags.project), await resolveId(ctx, RefKind.Project, flags.owner)];
      const query = { from: flags.from, to: flags.to, group_by: BY[flags.by], project, owner };
      const usage = await client.get<Usage>('/v1/usage', query);
      if (flags.csv) return ctx.out(usageCsv(usage.group_by, usage.groups).replace(/\r\n/g, '\n'));
      ctx.print(usage, () => usageTable(usage));
    });
}
