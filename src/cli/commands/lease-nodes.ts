import type { Command } from 'commander';
import type { Lease } from '../api-types.js';
import type { CliContext } from '../context.js';
import type { ApiClient } from '../client.js';
import { ApiError, UsageError } from '../errors.js';
import { renderTable } from '../output.js';
import { parseTimestamp } from '../parsers.js';
import { fetchRef, RefKind, resolveId } from '../resolve-ref.js';
import { REPLACE_TEXT, leaseView, replaceOption } from './lease.js';

const leasePath = (id: string) => `/v1/leases/${encodeURIComponent(id)}`;
const allocationPath = (lease: string, node: string) => `${leasePath(lease)}/allocations/${encodeURIComponent(node)}`;

interface ReclaimResult {
  readonly node_id: string;
  readonly at: string;
  readonly leases: readonly { readonly lease_id: string; readonly substitute: string | null }[];
}

/**
 * A lease's nodes one at a time (`lease replace`, `lease release`), what a lease does when a node fails
 * (`lease set --replace`), and an owner taking a node back with notice (`node reclaim`). Registered after
 * `registerLeaseCommands` and `registerNodeCommands`, onto their command groups.
 */
export function registerLeaseNodeCommands(program: Command, ctx: CliContext): void {
  const lease = group(program, 'lease');
  const node = group(program, 'node');

  lease
    .command('replace')
    .description('swap one node of a lease for an equivalent free one (a node that works but misbehaves)')
    .argument('<lease>', 'lease id, name or id prefix')
    .argument('<node>', 'the node to give up (uuid, name or id prefix)')
    .option('--reason <text>', 'why, for the lease events (e.g. "flaky NIC")')
    .addHelpText(
      'after',
      [
        '',
        'The substitute meets the same group requirement (or, for a node you named, has at least its facts and',
        'traits), is free for the rest of the lease and is handed over at once; the old node leaves the lease now,',
        'as at an end: your access is cut, its networks come off and it is wiped. When no substitute exists the',
        'server says why and the lease keeps its node.',
        '',
        'Example:',
        '  leasehold lease replace 5f3c... gpu-03 --reason "GPU throws ECC errors"',
      ].join('\n'),
    )
    .action(async (ref: string, nodeRef: string, flags: { reason?: string }) => {
      const client = await ctx.client();
      const { id, nodeId } = await leaseAndNode(client, ref, nodeRef);
      const updated = await client.post<Lease>(`${allocationPath(id, nodeId)}/replace`, flags.reason ? { reason: flags.reason } : {});
      ctx.print(updated, () => leaseView(updated));
      if (!ctx.json) {
        const substitute = updated.allocations.find((a) => a.replaces !== null && (a.replaces === nodeId || nodeNamed(updated, a.replaces) === nodeId));
        if (substitute) ctx.note(`${nodeRef} replaced by ${substitute.node_name ?? substitute.node_id}; ${nodeRef} is being released and wiped`);
      }
    });

  lease
    .command('release')
    .description('give one node of a lease back now; the rest of the lease goes on (the last node ends the lease)')
    .argument('<lease>', 'lease id, name or id prefix')
    .argument('<node>', 'the node to give back (uuid, name or id prefix)')
    .addHelpText('after', '\nYour access to the node is cut at once, its networks come off and it is wiped and returned to the pool.\n\nExample:\n  leasehold lease release 5f3c... gpu-03')
    .action(async (ref: string, nodeRef: string) => {
      const client = await ctx.client();
      const { id, nodeId } = await leaseAndNode(client, ref, nodeRef);
      const updated = await client.request<Lease>('DELETE', allocationPath(id, nodeId));
      ctx.print(updated, () => leaseView(updated));
      if (!ctx.json) {
        // A node given back early is marked `returned`; the last one instead ends the lease (its end moved to now).
        const returned = updated.allocations.some((a) => a.leave_reason === 'returned' && (a.node_id === nodeId || a.node_name === nodeId));
        ctx.note(returned ? `${nodeRef} is being released and wiped; the lease goes on` : `that was the last node: lease ${updated.id} ends now (${updated.end})`);
      }
    });

  lease
    .command('set')
    .description("change how a lease treats a failed node")
    .argument('<lease>', 'lease id, name or id prefix')
    .addOption(replaceOption().makeOptionMandatory())
    .addHelpText('after', '\nExample:\n  leasehold lease set 5f3c... --replace ask')
    .action(async (ref: string, flags: { replace: string }) => {
      const client = await ctx.client();
      const id = await resolveId(ctx, RefKind.Lease, ref);
      const updated = await client.patch<Lease>(leasePath(id), { replace: flags.replace });
      ctx.print(updated, () => leaseView(updated));
      if (!ctx.json) ctx.note(`replace ${REPLACE_TEXT[updated.replace_policy]}`);
    });

  node
    .command('reclaim')
    .description('take a node you own back from its leases, with the notice its offer allows')
    .argument('<node>', 'node uuid, name or id prefix')
    .requiredOption('--at <time>', 'when the node leaves its leases (RFC 3339); at least the offer\'s reclaim notice from now', parseTimestamp)
    .addHelpText(
      'after',
      [
        '',
        'Only leases booked under an offer with a reclaim notice (`offer create --reclaim-notice 1d`) can be cut',
        'short. Each lease on the node past --at is told and gets an equivalent node from then where one is free,',
        'or the node simply leaves it then; the node\'s offers end at --at. Too early: the server names the lease',
        'and the earliest instant, and nothing changes.',
        '',
        'Example:',
        '  leasehold node reclaim gpu-03 --at 2030-02-02T09:00:00Z',
      ].join('\n'),
    )
    .action(async (ref: string, flags: { at: string }) => {
      if (Date.parse(flags.at) < ctx.now().getTime()) throw new UsageError('--at must be now or later');
      const client = await ctx.client();
      const id = await resolveId(ctx, RefKind.Node, ref);
      const result = await client.post<ReclaimResult>(`/v1/nodes/${encodeURIComponent(id)}/reclaim`, { at: flags.at });
      ctx.print(result, () =>
        result.leases.length === 0
          ? `No lease holds ${id} after ${result.at}; its offers end then.`
          : renderTable(
              ['LEASE', 'FROM', 'SUBSTITUTE'],
              result.leases.map((l) => [l.lease_id, result.at, l.substitute ?? '(none: the node leaves the lease)']),
            ),
      );
    });
}

/**
 * The lease `ref` names and the node of it `nodeRef` names: among the lease's own nodes (by uuid, name or id
 * prefix), since a lessee may not see a node before its lease starts; ambiguous when a prefix fits several.
 */
async function leaseAndNode(client: ApiClient, ref: string, nodeRef: string): Promise<{ id: string; nodeId: string }> {
  const lease = await fetchRef<Lease>(client, RefKind.Lease, ref);
  const nodes = [...new Map(lease.allocations.map((a) => [a.node_id, a.node_name ?? null])).entries()];
  // The server takes a node's id or name itself (and names it as typed when it refuses): only a prefix is translated.
  if (nodes.some(([id, name]) => id === nodeRef || name === nodeRef)) return { id: lease.id, nodeId: nodeRef };
  const prefixed = nodes.filter(([id]) => id.toLowerCase().startsWith(nodeRef.toLowerCase()));
  if (prefixed.length === 1) return { id: lease.id, nodeId: prefixed[0]![0] };
  if (prefixed.length > 1) {
    const listed = prefixed.map(([id, name]) => (name ? `${name} (${id})` : id)).join(', ');
    throw new ApiError(0, 'ambiguous', `${prefixed.length} nodes of lease ${lease.id} have the id prefix ${JSON.stringify(nodeRef)}: ${listed}; give more of the id, or the name`, {
      kind: 'node',
      ref: nodeRef,
      candidates: prefixed.map(([id, name]) => ({ id, name })),
    });
  }
  // Not one of its nodes: the server says so in its own words.
  return { id: lease.id, nodeId: nodeRef };
}

/** The name of a node of the lease by its id (a replaced node is still listed, as having left). */
function nodeNamed(l: Lease, nodeId: string): string | null {
  return l.allocations.find((a) => a.node_id === nodeId)?.node_name ?? null;
}

function group(program: Command, name: string): Command {
  const found = program.commands.find((c) => c.name() === name);
  if (!found) throw new Error(`register the ${name} commands first`);
  return found;
}
