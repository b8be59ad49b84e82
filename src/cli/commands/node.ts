import { Argument, Option, type Command } from 'commander';
import type { BootDeviceResult, Node, PowerResult, SyncResult } from '../api-types.js';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { formatBool, formatCount, formatDisk, formatMemory, nameAndId, shortId } from '../format.js';
import { renderFields, renderTable, type Cell } from '../output.js';
import { printList } from '../paging.js';
import { fetchRef, RefKind, resolveId } from '../resolve-ref.js';
import { listOptions, type ListFlags } from './list-options.js';
import { registerNodeNetworkCommands } from './network.js';
import { bootDeviceText, DEFAULT_POWER_WAIT_MS, waitForPower } from './node-wait.js';
import { parsePositiveDuration } from '../parsers.js';

/** Facts with their own rows or columns; any other fact is listed after them. */
const MAIN_FACTS = new Set(['memory', 'disk', 'cpus', 'gpus', 'cpu_arch', 'resource_class']);

const nodePath = (id: string) => `/v1/nodes/${encodeURIComponent(id)}`;

const POWER_ACTIONS = ['on', 'off', 'reboot'] as const;
const BOOT_DEVICES = ['pxe', 'disk', 'cdrom', 'bios', 'safe'] as const;

/** MAINT column: a quarantine says more than "yes" (the node is out until someone clears it). */
function maintColumn(n: Node): string {
  return n.quarantined === true ? 'quarantined' : formatBool(n.maintenance);
}

function owner(n: Node): string | null {
  return n.owner_project?.name ?? n.owner;
}

/**
 * The node table: 120 columns with names the demo uses (short id; power as on/off), everything with --wide (the
 * full id, resource class and architecture) — 160 columns and more did not fit a terminal.
 */
function nodeTable(nodes: Node[], wide = false): string {
  if (wide) {
    return renderTable(
      ['NAME', 'ID', 'OWNER', 'RESOURCE CLASS', 'MEMORY', 'CPUS', 'GPUS', 'DISK', 'ARCH', 'POWER', 'PROVISION STATE', 'MAINT', 'LEASE'],
      nodes.map((n) => [
        n.name,
        n.id,
        owner(n),
        n.resource_class,
        formatMemory(n.facts.memory),
        formatCount(n.facts.cpus),
        formatCount(n.facts.gpus),
        formatDisk(n.facts.disk),
        formatCount(n.facts.cpu_arch),
        n.power_state,
        n.provision_state,
        maintColumn(n),
        shortId(n.lease?.id),
      ]),
    );
  }
  return renderTable(
    ['NAME', 'ID', 'OWNER', 'MEMORY', 'CPUS', 'GPUS', 'DISK', 'POWER', 'PROVISION STATE', 'MAINT', 'LEASE'],
    nodes.map((n) => [
      n.name,
      shortId(n.id),
      owner(n),
      formatMemory(n.facts.memory),
      formatCount(n.facts.cpus),
      formatCount(n.facts.gpus),
      formatDisk(n.facts.disk),
      n.power_state?.replace(/^power /, '') ?? null,
      n.provision_state,
      maintColumn(n),
      shortId(n.lease?.id),
    ]),
  );
}

export function nodeFields(n: Node, bootDevice: string | null = null): string {
  const provision =
    n.target_provision_state && n.target_provision_state !== n.provision_state
      ? `${n.provision_state ?? '-'} -> ${n.target_provision_state}`
      : n.provision_state;
  const maintenance = n.maintenance ? `yes${n.maintenance_reason ? `: ${n.maintenance_reason}` : ''}` : 'no';
  const quarantine = n.quarantined === true ? `yes${n.quarantine_reason ? `: ${n.quarantine_reason}` : ''}` : 'no';
  const lessee = n.lease?.project_name ?? n.lease?.project_id;
  const lease = n.lease ? `${n.lease.id} (project ${lessee}, until ${n.lease.end})` : null;
  const parent = n.lease?.sublease_of;
  const subleaseOf = parent ? `${parent.lease_name} ${parent.lease_id} (project ${parent.project_name}, until ${parent.end})` : null;
  const otherFacts = Object.keys(n.facts)
    .filter((key) => !MAIN_FACTS.has(key))
    .sort()
    .map((key): [string, Cell] => [`fact ${key}`, factValue(n.facts[key])]);
  return renderFields([
    ['id', n.id],
    ['name', n.name],
    ['owner', nameAndId(n.owner_project, n.owner)],
    // Ironic's lessee is a project id; when it is the lease's project (as the engine sets it), its name beside it.
    ['lessee', n.lessee && n.lease && n.lessee === n.lease.project_id && n.lease.project_name ? `${n.lease.project_name} (${n.lessee})` : n.lessee],
    ['resource class', n.resource_class],
    ['memory', formatMemory(n.facts.memory)],
    ['cpus', formatCount(n.facts.cpus)],
    ['gpus', formatCount(n.facts.gpus)],
    ['disk', formatDisk(n.facts.disk)],
    ['cpu arch', formatCount(n.facts.cpu_arch)],
    ...otherFacts,
    ['traits', n.traits.join(', ')],
    ['power state', n.power_state],
    ['boot device', bootDevice],
    ['provision state', provision],
    ['maintenance', maintenance],
    ['quarantined', quarantine],
    ['lease', lease],
    ...(subleaseOf ? [['sublease of', subleaseOf] as [string, Cell]] : []),
    ['last error', n.last_error],
    ['console enabled', formatBool(n.console_enabled)],
    ['synced at', n.synced_at],
  ]);
}

function factValue(value: unknown): Cell {
  if (value === null || value === undefined) return null;
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

type NodeListFlags = ListFlags & {
  owner?: string;
  resourceClass?: string;
  provisionState?: string;
  powerState?: string;
  maintenance?: 'true' | 'false';
  where?: string;
  wide?: boolean;
};

/** `leasehold node ...`: the hardware inventory as Leasehold sees it (synced from the hardware driver). */
export function registerNodeCommands(program: Command, ctx: CliContext): void {
  const node = program
    .command('node')
    .summary('list and show nodes, power and boot them, set owners, sync')
    .description('list and show nodes, power and boot them, clear quarantines, set their owner, sync the inventory')
    .helpCommand(false);

  listOptions(node.command('list').description('list the nodes you can see (sorted by name)'))
    .option('--owner <project>', 'only nodes owned by this project (id, name or id prefix)')
    .option('--resource-class <class>', 'only nodes of this resource class, e.g. baremetal.gpu')
    .option('--provision-state <state>', 'only nodes in this provision state, e.g. available')
    .option('--power-state <state>', 'only nodes in this power state, e.g. "power on"')
    .addOption(new Option('--maintenance <bool>', 'only nodes in (true) or out of (false) maintenance').choices(['true', 'false']))
    .option('--where <expression>', 'only nodes matching a requirement expression, e.g. "gpus >= 2 and memory >= 256GiB"')
    .option('--wide', 'every column: the full id, resource class and architecture')
    .addHelpText('after', '\nMEMORY is in GiB, DISK in decimal GB/TB (the units of `memory >= 48GiB`, `disk >= 1TB`).')
    .action(async (flags: NodeListFlags) => {
      const query = {
        owner: await resolveId(ctx, RefKind.Project, flags.owner),
        resource_class: flags.resourceClass,
        provision_state: flags.provisionState,
        power_state: flags.powerState,
        maintenance: flags.maintenance,
        where: flags.where,
      };
      await printList<Node>(
        ctx,
        { path: '/v1/nodes', key: 'nodes', query, all: flags.all, limit: flags.limit, marker: flags.marker },
        (nodes) => nodeTable(nodes, flags.wide === true),
      );
    });

  node
    .command('show')
    .description('show a node: owner, facts, traits and states')
    .argument('<node>', 'node uuid, name or id prefix')
    .action(async (ref: string) => {
      const client = await ctx.client();
      const shown = await fetchRef<Node>(client, RefKind.Node, ref);
      // Only the table says it (the JSON is the node's): read it only then, and only where the caller may.
      if (ctx.json) ctx.print(shown, () => '');
      else {
        const boot = await bootDeviceText(client, nodePath(shown.id));
        ctx.print(shown, () => nodeFields(shown, boot));
      }
    });

  node
    .command('set-owner')
    .description("set or clear a node's owner project (operator)")
    .argument('<node>', 'node uuid, name or id prefix')
    .argument('[project]', 'the new owner: project id, name or id prefix')
    .option('--none', 'clear the owner instead')
    .addHelpText('after', '\nExamples:\n  leasehold node set-owner 0b6a5c3e-... physics-lab\n  leasehold node set-owner 0b6a5c3e-... --none')
    .action(async (id: string, project: string | undefined, flags: { none?: boolean }) => {
      if (project !== undefined && flags.none) throw new UsageError('give a project or --none, not both');
      if (project === undefined && !flags.none) {
        throw new UsageError('give the new owner (project id or name), or --none to clear it');
      }
      const client = await ctx.client();
      const [nodeId, owner] = [await resolveId(ctx, RefKind.Node, id), flags.none ? null : await resolveId(ctx, RefKind.Project, project!)];
      const updated = await client.patch<Node>(nodePath(nodeId), { owner });
      ctx.print(updated, () => nodeFields(updated));
    });

  node
    .command('sync')
    .description('sync the inventory from the hardware driver now (operator)')
    .action(async () => {
      const client = await ctx.client();
      const result = await client.post<SyncResult>('/v1/nodes/sync');
      ctx.print(result, () =>
        renderFields([
          ['added', result.added],
          ['updated', result.updated],
          ['removed', result.removed],
          ['unchanged', result.unchanged],
        ]),
      );
    });

  node
    .command('power')
    .description('power a node on or off, or reboot it (its lessee during a lease, its owner, the operator)')
    .argument('<node>', 'node uuid, name or id prefix')
    .addArgument(new Argument('<action>', 'what to do').choices(POWER_ACTIONS))
    .option('--wait', 'wait until the node is there, printing each change (exit 1 if it does not get there)')
    .addOption(new Option('--wait-timeout <duration>', 'give up waiting after this long (default 2m)').argParser(parsePositiveDuration))
    .addHelpText('after', '\nThe server accepts the request (202) and the node gets there shortly: --wait follows it, or see `leasehold node show`.')
    .action(async (id: string, action: (typeof POWER_ACTIONS)[number], flags: { wait?: boolean; waitTimeout?: number }) => {
      if (flags.waitTimeout !== undefined && !flags.wait) throw new UsageError('--wait-timeout goes with --wait');
      const client = await ctx.client();
      const result = await client.post<PowerResult>(`${nodePath(await resolveId(ctx, RefKind.Node, id))}/power`, { action });
      if (!flags.wait) {
        ctx.print(result, () => `Power ${result.action} requested for node ${id} (target: ${result.target_power_state ?? '-'})`);
        return;
      }
      ctx.note(`power ${action} requested for node ${id}`);
      const done = await waitForPower(ctx, client, nodePath(result.node_id), action, flags.waitTimeout ?? DEFAULT_POWER_WAIT_MS);
      ctx.print(done, () => `Node ${done.name ?? done.id} is ${done.power_state}`);
    });

  node
    .command('boot-device')
    .description('set the device a node boots from next (its lessee during a lease, its owner, the operator)')
    .argument('<node>', 'node uuid, name or id prefix')
    .addArgument(new Argument('<device>', 'boot device').choices(BOOT_DEVICES))
    .option('--persistent', 'keep it for every boot, not just the next one')
    .action(async (id: string, device: (typeof BOOT_DEVICES)[number], flags: { persistent?: boolean }) => {
      const client = await ctx.client();
      const result = await client.post<BootDeviceResult>(`${nodePath(await resolveId(ctx, RefKind.Node, id))}/boot-device`, {
        device,
        persistent: flags.persistent === true,
      });
      ctx.print(
        result,
        () => `Node ${id} boots from ${result.boot_device} ${result.persistent ? 'from now on' : 'next time'}`,
      );
    });

  registerNodeNetworkCommands(node, ctx);

  node
    .command('unquarantine')
    .description('clear a quarantine after a failed clean, so the node can be leased again (owner, operator)')
    .argument('<node>', 'node uuid, name or id prefix')
    .action(async (id: string) => {
      const client = await ctx.client();
      const updated = await client.patch<Node>(nodePath(await resolveId(ctx, RefKind.Node, id)), { quarantined: false });
      ctx.print(updated, () => nodeFields(updated));
    });
}
