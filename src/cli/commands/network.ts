import type { Command } from 'commander';
import type { Network, NetworkAttachment, Node, NodeNetworks } from '../api-types.js';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { shortId } from '../format.js';
import { renderFields, renderTable } from '../output.js';
import { RefKind, resolveId } from '../resolve-ref.js';

const networksPath = (node: string) => `/v1/nodes/${encodeURIComponent(node)}/networks`;

const vlan = (v: number | null | undefined) => (v === null || v === undefined ? null : String(v));

function networkTable(networks: readonly Network[]): string {
  return renderTable(
    ['NAME', 'ID', 'TYPE', 'VLAN', 'PHYSNET', 'SHARED', 'PROJECT'],
    networks.map((n) => [n.name, n.id, n.network_type, vlan(n.vlan), n.physical_network, n.shared ? 'yes' : 'no', n.project_id]),
  );
}

/** One row per NIC of each node: what is plugged in, its VLAN and binding (ESI's "node network list" in one command). */
function nicTable(nodes: readonly { readonly name: string; readonly networks: NodeNetworks }[]): string {
  const rows = nodes.flatMap(({ name, networks }) =>
    networks.nics.map((nic) => {
      const a = nic.attachment;
      const tagged = a?.trunk?.tagged.map((t) => `${t.network.name}${t.network.vlan === null ? '' : `:${t.network.vlan}`}`).join(',');
      return [
        name,
        nic.mac,
        nic.physical_network,
        a?.network?.name ?? (nic.in_use ? '(in use)' : null),
        vlan(a?.network?.vlan),
        tagged || null,
        a?.binding ?? null,
        a?.port_id ? shortId(a.port_id) : null,
        a ? shortId(a.id) : null,
      ];
    }),
  );
  return renderTable(['NODE', 'MAC', 'PHYSNET', 'NETWORK', 'VLAN', 'TAGGED', 'BINDING', 'PORT', 'ATTACHMENT'], rows);
}

function attachmentFields(a: NetworkAttachment): string {
  return renderFields([
    ['attachment', a.id],
    ['node', a.node_id],
    ['state', a.state],
    ['network', a.network ? `${a.network.name} (${a.network.id})` : null],
    ['vlan', vlan(a.network?.vlan)],
    ['nic', a.nic.mac],
    ['port', `${a.port_id ?? '-'}${a.port_created ? ' (created by Leasehold: deleted on detach)' : ''}`],
    ['binding', a.binding],
    ['tagged', a.trunk?.tagged.map((t) => `${t.network.name} (VLAN ${t.network.vlan ?? '-'})`).join(', ') ?? null],
    ['project', a.project_id],
    ['lease', a.lease_id],
  ]);
}

/** `leasehold network list`: the networks the caller may attach. */
export function registerNetworkCommands(program: Command, ctx: CliContext): void {
  const network = program.command('network').summary('the networks you may attach to nodes').helpCommand(false);
  network
    .command('list')
    .description("list the networks you may attach: your project's, the shared ones, those shared with you")
    .action(async () => {
      const client = await ctx.client();
      const { networks } = await client.get<{ networks: Network[] }>('/v1/networks');
      ctx.print({ networks }, () => networkTable(networks));
    });
}

/** `leasehold node network list|attach|detach|tag|untag`: a node's NICs and the networks on them. */
export function registerNodeNetworkCommands(node: Command, ctx: CliContext): void {
  const net = node.command('network').summary("a node's NICs and the networks attached to them").helpCommand(false);

  net
    .command('list')
    .description('every NIC with its network, VLAN and binding — of one node, or of every node you can see')
    .argument('[node]', 'node uuid, name or id prefix (default: all your nodes: owned, or leased now)')
    .action(async (ref: string | undefined) => {
      const client = await ctx.client();
      const id = await resolveId(ctx, RefKind.Node, ref);
      const nodes = id ? [{ id, name: ref ?? id }] : (await client.get<{ nodes: Node[] }>('/v1/nodes', { limit: '1000' })).nodes.map((n) => ({ id: n.id, name: n.name ?? n.id }));
      const listed = await Promise.all(nodes.map(async (n) => ({ name: n.name, networks: await client.get<NodeNetworks>(networksPath(n.id)) })));
      ctx.print(id ? listed[0]!.networks : { nodes: listed.map((l) => l.networks) }, () => nicTable(listed));
    });

  net
    .command('attach')
    .description('attach a network to a node: a port in your project, plugged into a free NIC (or --mac)')
    .argument('<node>', 'node uuid, name or id prefix')
    .argument('[network]', 'network id or name (see `leasehold network list`); optional with --port')
    .option('--mac <mac>', 'the NIC to use, by its MAC address')
    .option('--port <port>', 'plug in this existing Neutron port of your project instead of a new one')
    .option('--tagged <networks>', 'comma-separated networks to carry tagged on their VLANs (a trunk); on a trunk already attached, adds them')
    .addHelpText('after', '\nExamples:\n  leasehold node network attach gpu-01 my-vlan\n  leasehold node network attach gpu-01 public --tagged storage,backup\n  leasehold node network attach gpu-01 public --tagged extra     # adds a tagged network to the trunk on public')
    .action(async (ref: string, network: string | undefined, flags: { mac?: string; port?: string; tagged?: string }) => {
      if (network === undefined && flags.port === undefined) throw new UsageError('give a network (id or name), or --port');
      const tagged = flags.tagged?.split(',').map((t) => t.trim()).filter((t) => t !== '');
      const client = await ctx.client();
      const id = await resolveId(ctx, RefKind.Node, ref);
      if (network !== undefined && tagged && tagged.length > 0 && flags.mac === undefined && flags.port === undefined) {
        // A trunk of this network already on the node: add the tagged networks to it.
        const nics = await client.get<NodeNetworks>(networksPath(id));
        const trunk = nics.nics.find((n) => n.attachment?.trunk && (n.attachment.network?.name === network || n.attachment.network?.id === network));
        if (trunk?.attachment) {
          const updated = await client.post<NetworkAttachment>(`${networksPath(id)}/${encodeURIComponent(trunk.attachment.id)}/tagged`, { networks: tagged });
          ctx.print(updated, () => attachmentFields(updated));
          return;
        }
      }
      const attached = await client.post<NetworkAttachment>(networksPath(id), { network, mac: flags.mac, port: flags.port, tagged });
      ctx.print(attached, () => attachmentFields(attached));
    });

  net
    .command('detach')
    .description('detach a network from a node (a tagged network: from its trunk); deletes the port if Leasehold made it')
    .argument('<node>', 'node uuid, name or id prefix')
    .argument('[network]', 'network id or name, or an attachment or port id')
    .option('--all', 'detach every network of yours from the node')
    .action(async (ref: string, network: string | undefined, flags: { all?: boolean }) => {
      if ((network === undefined) === !flags.all) throw new UsageError('give a network (or attachment id), or --all');
      const client = await ctx.client();
      const id = await resolveId(ctx, RefKind.Node, ref);
      const nics = await client.get<NodeNetworks>(networksPath(id));
      const attachments = nics.nics.flatMap((n) => (n.attachment ? [n.attachment] : []));
      if (flags.all) {
        const done: NetworkAttachment[] = [];
        for (const a of attachments) done.push(await client.request<NetworkAttachment>('DELETE', `${networksPath(id)}/${encodeURIComponent(a.id)}`));
        ctx.print({ detached: done }, () => (done.length === 0 ? `No networks of yours on node ${id}\n` : done.map((d) => `Detached ${d.network?.name ?? d.port_id} from ${id}\n`).join('')));
        return;
      }
      const trunk = attachments.find((a) => a.trunk?.tagged.some((t) => t.network.name === network || t.network.id === network));
      if (trunk && !attachments.some((a) => a.network?.name === network || a.network?.id === network || a.id === network || a.port_id === network)) {
        const updated = await client.request<NetworkAttachment>('DELETE', `${networksPath(id)}/${encodeURIComponent(trunk.id)}/tagged/${encodeURIComponent(network!)}`);
        ctx.print(updated, () => `Removed tagged network ${network} from the trunk on ${trunk.network?.name ?? trunk.port_id}\n`);
        return;
      }
      const detached = await client.request<NetworkAttachment>('DELETE', `${networksPath(id)}/${encodeURIComponent(network!)}`);
      ctx.print(detached, () => `Detached ${detached.network?.name ?? detached.port_id} from ${id}${detached.port_created ? ' (its port deleted)' : ''}\n`);
    });
}
