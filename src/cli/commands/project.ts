import { Option, type Command } from 'commander';
import type { Project } from '../api-types.js';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { formatLimit } from '../format.js';
import { renderFields, renderTable } from '../output.js';
import { printList } from '../paging.js';
import { parseCountOrNone, parseDurationOrNone, parseIsoDuration, parseNodeHoursOrNone, UNLIMITED } from '../parsers.js';
import { fetchRef, RefKind, resolveId } from '../resolve-ref.js';
import { listOptions, type ListFlags } from './list-options.js';

export const projectPath = (idOrName: string) => `/v1/projects/${encodeURIComponent(idOrName)}`;

export function projectFields(p: Project): string {
  return renderFields([
    ['id', p.id],
    ['name', p.name],
    ['description', p.description],
    ['max nodes', formatLimit(p.quota.max_nodes)],
    ['max lease duration', formatLimit(p.quota.max_lease_duration)],
    ['max node-hours/month', formatLimit(p.quota.max_node_hours)],
    // Only a project with its own notice offsets says so; the others follow the operator's.
    ...(p.notice_offsets === null ? [] : [['notices', p.notice_offsets.length === 0 ? 'none' : p.notice_offsets.map((o) => `${o} before the end`).join(', ')] as const]),
    ['created at', p.created_at],
    ['updated at', p.updated_at],
  ]);
}

function projectTable(projects: Project[]): string {
  return renderTable(
    ['NAME', 'ID', 'MAX NODES', 'MAX LEASE', 'DESCRIPTION'],
    projects.map((p) => [
      p.name,
      p.id,
      formatLimit(p.quota.max_nodes),
      formatLimit(p.quota.max_lease_duration),
      p.description,
    ]),
  );
}

/** `leasehold project ...`: projects own and lease nodes; the operator creates them and sets their quotas. */
export function registerProjectCommands(program: Command, ctx: CliContext): void {
  const project = program
    .command('project')
    .summary('manage projects (tenants) and their quotas')
    .description('create, list, show and change projects (tenants) and their quotas')
    .helpCommand(false);

  project
    .command('create')
    .description('create a project (operator)')
    .argument('<name>', 'project name: letters, digits, ".", "_" and "-"')
    .option('--description <text>', 'free text shown in listings')
    .action(async (name: string, flags: { description?: string }) => {
      const client = await ctx.client();
      const created = await client.post<Project>('/v1/projects', { name, description: flags.description });
      ctx.print(created, () => projectFields(created));
    });

  listOptions(project.command('list').description('list the projects you can see')).action(async (flags: ListFlags) => {
    await printList<Project>(ctx, { path: '/v1/projects', key: 'projects', ...flags }, projectTable);
  });

  project
    .command('show')
    .description('show a project and its quota')
    .argument('<project>', 'project id, name or id prefix')
    .action(async (ref: string) => {
      const client = await ctx.client();
      const shown = await fetchRef<Project>(client, RefKind.Project, ref);
      ctx.print(shown, () => projectFields(shown));
    });

  project
    .command('set')
    .description("rename a project, change its description or set its quota (operator)")
    .argument('<project>', 'project id, name or id prefix')
    .option('--name <name>', 'new name')
    .option('--description <text>', 'new description')
    .addOption(
      new Option('--max-nodes <n|none>', 'most nodes the project may lease at once; "none" removes the limit').argParser(
        parseCountOrNone,
      ),
    )
    .addOption(
      new Option(
        '--max-lease-duration <duration|none>',
        'longest lease the project may take, e.g. 5d, 12h, P5D; "none" removes the limit',
      ).argParser(parseDurationOrNone),
    )
    .addOption(
      new Option('--max-node-hours <n|none>', 'node-hours the project may book per calendar month (UTC); "none" removes the limit').argParser(
        parseNodeHoursOrNone,
      ),
    )
    .addOption(
      new Option(
        '--notice-offsets <list|default|none>',
        "when the project hears a lease is ending, e.g. 1d,1h; \"default\": the operator's; \"none\": never (its manager may set this)",
      ).argParser(parseNoticeOffsets),
    )
    .addHelpText(
      'after',
      '\nExamples:\n  leasehold project set physics-lab --max-nodes 10 --max-lease-duration 5d --max-node-hours 2000\n  leasehold project set physics-lab --notice-offsets 2d,1h',
    )
    .action(
      async (
        idOrName: string,
        flags: {
          name?: string;
          description?: string;
          maxNodes?: number | typeof UNLIMITED;
          maxLeaseDuration?: string;
          maxNodeHours?: number | typeof UNLIMITED;
          noticeOffsets?: string[] | 'default';
        },
      ) => {
        const orNull = <T>(value: T) => (value === UNLIMITED ? null : value);
        const quota: Record<string, unknown> = {};
        if (flags.maxNodes !== undefined) quota.max_nodes = orNull(flags.maxNodes);
        if (flags.maxLeaseDuration !== undefined) quota.max_lease_duration = orNull(flags.maxLeaseDuration);
        if (flags.maxNodeHours !== undefined) quota.max_node_hours = orNull(flags.maxNodeHours);
        const body: Record<string, unknown> = {};
        if (flags.name !== undefined) body.name = flags.name;
        if (flags.description !== undefined) body.description = flags.description;
        if (Object.keys(quota).length > 0) body.quota = quota;
        if (flags.noticeOffsets !== undefined) body.notice_offsets = flags.noticeOffsets === 'default' ? null : flags.noticeOffsets;
        if (Object.keys(body).length === 0) {
          throw new UsageError('nothing to change: give --name, --description, --max-nodes, --max-lease-duration, --max-node-hours or --notice-offsets');
        }
        const client = await ctx.client();
        const updated = await client.patch<Project>(projectPath(await resolveId(ctx, RefKind.Project, idOrName)), body);
        ctx.print(updated, () => projectFields(updated));
      },
    );
}

/**
 * `--notice-offsets 1d,1h` as ISO 8601 durations; `default` the operator's (sent as null: commander takes a parser's
 * null for "no value" and keeps the text), `none` an empty list.
 */
function parseNoticeOffsets(value: string): string[] | 'default' {
  const text = value.trim().toLowerCase();
  if (text === 'default') return 'default';
  if (text === 'none') return [];
  return value.split(',').map((part) => parseIsoDuration(part.trim()));
}
