import { Option, type Command } from 'commander';
import type { AuditEvent } from '../api-types.js';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { shortId } from '../format.js';
import { renderTable } from '../output.js';
import { printList } from '../paging.js';
import { parseTimestamp } from '../parsers.js';
import { RefKind, resolveId } from '../resolve-ref.js';
import { listOptions, type ListFlags } from './list-options.js';

/**
 * Names where people read: the node and the project by name (the short id when it has none), and the message with
 * the ids it mentions replaced by names, as the server sends it in display_message (a server from before: message).
 */
function eventTable(events: AuditEvent[]): string {
  return renderTable(
    ['AT', 'TYPE', 'OUTCOME', 'ACTOR', 'NODE', 'PROJECT', 'LEASE', 'MESSAGE'],
    events.map((e) => [
      e.at,
      e.type,
      e.outcome,
      e.actor,
      e.node_name ?? shortId(e.node_id),
      e.project_name ?? shortId(e.project_id),
      shortId(e.lease_id),
      e.display_message ?? e.message,
    ]),
  );
}

type EventListFlags = ListFlags & {
  node?: string;
  lease?: string;
  project?: string;
  type?: string;
  since?: string;
  until?: string;
};

/** `leasehold event list`: the audit log (who did what to which node and lease, when, and how it went). */
export function registerEventCommands(program: Command, ctx: CliContext): void {
  const event = program.command('event').description('read the audit log').helpCommand(false);

  listOptions(event.command('list').description('list audit events, newest first'))
    .option('--node <node>', 'only events about this node (uuid, name or id prefix)')
    .option('--lease <lease>', 'only events about this lease (id, name or id prefix)')
    .option('--project <project>', 'only events of this project (id, name or id prefix)')
    .option('--type <type>', 'only events of this type')
    .addOption(new Option('--since <time>', 'only events at or after this time (RFC 3339)').argParser(parseTimestamp))
    .addOption(new Option('--until <time>', 'only events before this time (RFC 3339)').argParser(parseTimestamp))
    .addHelpText('after', '\nLEASE shows the first 8 characters of the lease id; --json has the full ids, the message as recorded and details.')
    .action(async (flags: EventListFlags) => {
      if (flags.since !== undefined && flags.until !== undefined && Date.parse(flags.until) <= Date.parse(flags.since)) {
        throw new UsageError('--until must be after --since');
      }
      const query = {
        node_id: await resolveId(ctx, RefKind.Node, flags.node),
        lease_id: await resolveId(ctx, RefKind.Lease, flags.lease),
        project: await resolveId(ctx, RefKind.Project, flags.project),
        type: flags.type,
        since: flags.since,
        until: flags.until,
      };
      await printList<AuditEvent>(
        ctx,
        { path: '/v1/events', key: 'events', query, all: flags.all, limit: flags.limit, marker: flags.marker },
        eventTable,
      );
    });
}
