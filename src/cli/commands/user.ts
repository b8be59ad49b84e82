import { Option, type Command } from 'commander';
import type { User } from '../api-types.js';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { renderFields, renderTable } from '../output.js';
import { printList } from '../paging.js';
import { fetchRef, RefKind, resolveId } from '../resolve-ref.js';
import { listOptions, type ListFlags } from './list-options.js';

const ROLES = ['reader', 'member', 'manager', 'admin'] as const;

function userFields(u: User): string {
  return renderFields([
    ['id', u.id],
    ['name', u.name],
    ['role', u.role],
    // A server from before project_name sends only the id.
    ['project', u.project_id === null ? null : u.project_name ? `${u.project_name} (${u.project_id})` : u.project_id],
    ['created at', u.created_at],
  ]);
}

function userTable(users: User[]): string {
  return renderTable(
    ['NAME', 'ID', 'ROLE', 'PROJECT', 'CREATED AT'],
    users.map((u) => [u.name, u.id, u.role, u.project_name ?? u.project_id, u.created_at]),
  );
}

/** `leasehold user ...`: people (and robots) in a project with a role; admins belong to no project. */
export function registerUserCommands(program: Command, ctx: CliContext): void {
  const user = program.command('user').description('create, list and show users').helpCommand(false);

  user
    .command('create')
    .description('create a user in a project (operator, or a manager of that project)')
    .argument('<name>', 'user name')
    .option('--project <project>', 'project id or name (not for --role admin)')
    .addOption(
      new Option('--role <role>', 'reader only reads; member also leases and uses nodes; manager also manages users')
        .choices(ROLES)
        .makeOptionMandatory(),
    )
    .addHelpText(
      'after',
      '\nExamples:\n  leasehold user create alice --project physics-lab --role member\n  leasehold user create ops --role admin',
    )
    .action(async (name: string, flags: { project?: string; role: (typeof ROLES)[number] }) => {
      if (flags.role === 'admin' && flags.project !== undefined) {
        throw new UsageError('an admin (operator) belongs to no project: drop --project');
      }
      if (flags.role !== 'admin' && flags.project === undefined) {
        throw new UsageError(`a ${flags.role} belongs to a project: give --project <id or name>`);
      }
      const client = await ctx.client();
      const created = await client.post<User>('/v1/users', {
        name,
        project_id: (await resolveId(ctx, RefKind.Project, flags.project)) ?? null,
        role: flags.role,
      });
      ctx.print(created, () => userFields(created));
    });

  listOptions(user.command('list').description('list the users you can see'))
    .option('--project <project>', 'only the users of this project (id, name or id prefix)')
    .action(async (flags: ListFlags & { project?: string }) => {
      await printList<User>(
        ctx,
        { path: '/v1/users', key: 'users', query: { project_id: await resolveId(ctx, RefKind.Project, flags.project) }, all: flags.all, limit: flags.limit, marker: flags.marker },
        userTable,
      );
    });

  user
    .command('show')
    .description('show a user')
    .argument('<user>', 'user id, name or id prefix')
    .action(async (ref: string) => {
      const client = await ctx.client();
      const shown = await fetchRef<User>(client, RefKind.User, ref);
      ctx.print(shown, () => userFields(shown));
    });
}
