import { Option, type Command } from 'commander';
import type { AuditEvent } from '../api-types.js';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { shortId } from '../format.js';
import { renderTable } from '../output.js';
import { printList } from '../paging.js';
import { parseTimestamp } from '../parsers.js';
import { listOptions, type ListFlags } from './list-options.js';

function eventTable(events: AuditEvent[]): string {
  return renderTable(
    ['AT', 'TYPE', 'OUTCOME', 'ACTOR', 'NODE', 'LEASE', 'MESSAGE'],
    events.map((e) => [e.at, e.type, e.outcome, e.actor, e.node_id, shortId(e.lease_id), e.message]),
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
    .option('--node <node>', 'only events about this node (uuid or name)')
    .option('--lease <lease-id>', 'only events about this lease')
    .option('--project <project>', 'only events of this project (id or name)')
    .option('--type <type>', 'only events of this type')
    .addOption(new Option('--since <time>', 'only events at or after this time (RFC 3339)').argParser(parseTimestamp))
    .addOption(new Option('--until <time>', 'only events before this time (RFC 3339)').argParser(parseTimestamp))
    .addHelpText('after', '\nLEASE shows the first 8 characters of the lease id; --json has the full ids and details.')
    .action(async (flags: EventListFlags) => {
      if (flags.since !== undefined && flags.until !== undefined && Date.parse(flags.until) <= Date.parse(flags.since)) {
        throw new UsageError('--until must be after --since');
      }
      const query = {
        node_id: flags.node,
        lease_id: flags.lease,
        project: flags.project,
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
