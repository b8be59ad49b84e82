import type { Clock } from '../domain/clock.js';
import { ConflictError, InvalidRequestError, isLeaseholdError, NotFoundError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import type { NewAuditEvent } from '../domain/leasing.js';
import {
  AttachmentState,
  networkVisibleTo,
  normalizeMac,
  pickNic,
  type Network,
  type NetworkAttachment,
  type NetworkPort,
  type Nic,
  type TaggedNetwork,
} from '../domain/networks.js';
import type { AccessGuard, HardwareDriver } from '../drivers/hardware-driver.js';
import type { NetworkBackend } from '../drivers/network-backend.js';
import type { NetworkTeardown } from '../engine/network-teardown.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/store.js';
import { attachmentFor, type NicView, type Viewer } from './nic-view.js';

export interface NetworkServiceDeps {
  readonly store: Store;
  readonly driver: HardwareDriver;
  readonly networks: NetworkBackend;
  readonly teardown: NetworkTeardown;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** Who acts, on which node, under which lease: decided by the entry point (node access and the VIF rules) first. */
export interface NetworkActor {
  readonly node_id: string;
  /** The project whose ports it uses and creates (the caller's); null for an operator without a project. */
  readonly project_id: string | null;
  readonly admin: boolean;
  /** The caller owns the node. */
  readonly owner: boolean;
  /** The lease the caller holds the node under now (a lessee), or null. */
  readonly lease_id: string | null;
  readonly user_name: string;
  readonly user_id: string | null;
  /** Asked before each Ironic call made for the caller (nothing reaches Ironic after its lease ended). */
  readonly guard?: AccessGuard;
}

export interface AttachRequest {
  /** A network id or name; optional when `port` is given. */
  readonly network?: string;
  /** The NIC to use, by MAC; else a free one on the network's physnet. */
  readonly mac?: string;
  /** A Neutron port of the caller's project to plug in, instead of a new one. */
  readonly port?: string;
  /** Tagged networks (ids or names): a trunk with the network as its native one. */
  readonly tagged?: readonly string[];
}

/**
 * Tenant networks on nodes, for callers the entry points have already admitted (REST, CLI, web UI, and the VIF
 * check of the Ironic-compatible gateway): which networks a project may use, a node's NICs with what is plugged in,
 * attach (a port in the caller's project on a network it may use, plugged into a free NIC as an Ironic VIF, a trunk
 * for tagged networks) and detach. Every attach is a row first (`attaching`), advanced after each step; a failure
 * removes what it created and leaves the row `failed` with the reason, so nothing stays half-attached.
 */
export class NetworkService {
  constructor(private readonly deps: NetworkServiceDeps) {}

  get backend(): NetworkBackend {
    return this.deps.networks;
  }

  /** The networks a caller may use (its project's view; every network for the operator). */
  listNetworks(actor: Pick<NetworkActor, 'project_id' | 'admin'>): Promise<readonly Network[]> {
    return this.deps.networks.listNetworks(actor.admin ? null : actor.project_id);
  }

  /** The node's NICs, each with what is plugged in (in full where the viewer may see it). */
  async nodeNetworks(viewer: Viewer & { readonly node_id: string }): Promise<readonly NicView[]> {
    const { driver, networks, store } = this.deps;
    const [nics, rows] = await Promise.all([driver.listNics(viewer.node_id), store.networks.live(viewer.node_id)]);
    const vifs = nics.flatMap((n) => (n.vif === null ? [] : [n.vif]));
    const ports = vifs.length > 0 ? await networks.getPorts(vifs) : new Map<string, NetworkPort>();
    const networkIds = new Set([...ports.values()].map((p) => p.network_id));
    const nets = new Map<string, Network>();
    await Promise.all([...networkIds].map(async (id) => {
      const n = await networks.getNetwork(id);
      if (n) nets.set(id, n);
    }));
    return nics.map((nic) => {
      const port = nic.vif === null ? null : (ports.get(nic.vif) ?? null);
      const row = nic.vif === null ? null : (rows.find((r) => r.port_id === nic.vif) ?? null);
      return { nic, attachment: nic.vif === null ? null : attachmentFor(viewer, nic.vif, row, port, port ? (nets.get(port.network_id) ?? null) : null) };
    });
  }

  /** A network by id or name as `projectId` may use it (the operator: any); NotFoundError otherwise. */
  async resolveNetwork(ref: string, actor: Pick<NetworkActor, 'project_id' | 'admin'>): Promise<Network> {
    const { networks } = this.deps;
    const may = (n: Network) => actor.admin || (actor.project_id !== null && networkVisibleTo(n, actor.project_id));
    if (isUuid(ref)) {
      const byId = await networks.getNetwork(ref);
      if (byId && may(byId)) return byId;
    }
    const named = (await networks.networksNamed(ref)).filter(may);
    const own = named.filter((n) => n.project_id === actor.project_id);
    const pick = own.length === 1 ? own : named;
    if (pick.length === 1) return pick[0]!;
    if (pick.length === 0) throw new NotFoundError('network', ref);
    throw new ConflictError(`${pick.length} networks you may use are named ${JSON.stringify(ref)}: name it by id`, {
      details: { network: ref, candidates: pick.map((n) => n.id) },
    });
  }

  /** Plugs a network (or the caller's port) into a NIC of the node; answers the attachment as it stands. */
  async attach(actor: NetworkActor, request: AttachRequest): Promise<NetworkAttachment> {
    const { networks, driver, store } = this.deps;
    const project = actor.project_id;
    const port = request.port !== undefined ? await this.ownPort(request.port, actor) : null;
    if (project === null && !port) throw new InvalidRequestError('an operator without a project owns no ports: give `port` (an existing Neutron port) to attach');
    const network = request.network !== undefined ? await this.resolveNetwork(request.network, actor) : await this.networkOf(port!);
    if (port && port.network_id !== network.id) {
      throw new InvalidRequestError(`port ${port.id} is on network ${port.network_id}, not on ${network.name} (${network.id})`, { details: { field: 'port' } });
    }
    const tagged = await this.taggedNetworks(request.tagged ?? [], actor, network);
    const mac = request.mac === undefined ? null : normalizeMac(request.mac);
    if (request.mac !== undefined && mac === null) throw new InvalidRequestError(`mac: ${JSON.stringify(request.mac)} is not a MAC address`, { details: { field: 'mac' } });
    const nics = await driver.listNics(actor.node_id);
    const nic = this.chooseNic(nics, network, mac, actor.node_id);
    const holder = await networks.portWithMac(network.id, nic.mac);
    if (holder && holder.id !== port?.id) {
      throw new ConflictError(
        `Neutron: the mac address ${nic.mac} is in use on network ${network.name} by port ${holder.id} (left from an earlier attachment of this NIC): delete that port or attach it instead (port: ${holder.id})`,
        { details: { mac: nic.mac, port_id: holder.id, network_id: network.id } },
      );
    }

    const now = () => this.deps.clock.now();
    let row = await store.networks.create(
      {
        node_id: actor.node_id,
        project_id: port?.project_id ?? project!,
        lease_id: actor.lease_id,
        network_id: network.id,
        network_name: network.name,
        segmentation_id: network.segmentation_id,
        port_id: port?.id ?? null,
        nic_id: nic.id,
        mac: nic.mac,
        tagged: tagged.map((t) => ({ network_id: t.id, network_name: t.name, segmentation_id: t.segmentation_id, port_id: null, port_created: false })),
        state: AttachmentState.Attaching,
        created_by: actor.user_name,
      },
      [],
      now(),
    );
    try {
      if (!port) {
        const created = await networks.createPort({ network_id: network.id, project_id: project!, name: portName(actor.node_id, nic), description: 'created by Leasehold' });
        row = await store.networks.update(row.id, { port_id: created.id, port_created: true }, [], now());
      }
      if (tagged.length > 0) row = await this.makeTrunk(row, tagged);
      await driver.attachVif(actor.node_id, row.port_id!, { nicId: nic.id, guard: actor.guard });
      const event = this.event(actor, row, 'node.network_attached', `network ${network.name}${vlan(network)} attached on NIC ${nic.mac}${tagged.length > 0 ? ` with ${tagged.map((t) => t.name).join(', ')} tagged` : ''}`);
      row = await store.networks.update(row.id, { state: AttachmentState.Attached }, [event], now());
      this.deps.logger.info({ node_id: actor.node_id, attachment_id: row.id, network_id: network.id, port_id: row.port_id }, 'network attached');
      return row;
    } catch (err) {
      await this.undo(row, actor, err);
      throw err;
    }
  }

  /** Takes an attachment off the node (by attachment id, port id, or network id or name); deletes what Leasehold created. */
  async detach(actor: NetworkActor, ref: string): Promise<NetworkAttachment> {
    const row = await this.findAttachment(actor, ref);
    return this.deps.teardown.end(row, {
      actor: actor.user_name,
      actor_user_id: actor.user_id,
      lease_id: row.lease_id ?? actor.lease_id,
      reason: `detached by ${actor.user_name}`,
      guard: actor.guard,
    });
  }

  /** Adds tagged networks to an attachment (making it a trunk if it is not one yet). */
  async addTagged(actor: NetworkActor, ref: string, refs: readonly string[]): Promise<NetworkAttachment> {
    const row = await this.findAttachment(actor, ref);
    const network = await this.networkOf({ network_id: row.network_id });
    const known = new Set(row.tagged.map((t) => t.network_id));
    const fresh = (await this.taggedNetworks(refs, actor, network)).filter((n) => !known.has(n.id));
    if (fresh.length === 0) return row;
    if (row.trunk_id === null) {
      throw new ConflictError(
        `${row.network_name} is attached without a trunk, and Neutron makes a trunk only of a port not yet in use: detach it and attach it again with its tagged networks`,
      );
    }
    const updated = await this.addSubports(row, fresh);
    const event = this.event(actor, updated, 'node.network_tagged', `${fresh.map((n) => `${n.name}${vlan(n)}`).join(', ')} tagged on ${row.network_name}`);
    return this.deps.store.networks.update(updated.id, {}, [event], this.deps.clock.now());
  }

  /** Removes one tagged network from an attachment's trunk. */
  async removeTagged(actor: NetworkActor, ref: string, networkRef: string): Promise<NetworkAttachment> {
    const row = await this.findAttachment(actor, ref);
    const tag = row.tagged.find((t) => t.network_id === networkRef || t.network_name === networkRef);
    if (!tag || row.trunk_id === null) throw new NotFoundError('tagged network', networkRef);
    const { networks, store, clock } = this.deps;
    if (tag.port_id !== null) await networks.removeSubports(row.trunk_id, [tag.port_id]);
    if (tag.port_created && tag.port_id !== null) await networks.deletePort(tag.port_id);
    const tagged = row.tagged.filter((t) => t !== tag);
    const event = this.event(actor, row, 'node.network_untagged', `${tag.network_name} no longer tagged on ${row.network_name}`);
    return store.networks.update(row.id, { tagged }, [event], clock.now());
  }

  /**
   * The gateway's check before Ironic's `POST /v1/nodes/{id}/vifs`: Ironic attaches with Leasehold's credentials, so
   * a port must be the caller's project's (the operator: any) — else a lessee could plug another tenant's port into
   * its node. Records the attachment (the lease end takes it off). NotFoundError for a port the caller may not use.
   */
  async admitVif(actor: NetworkActor, portId: string): Promise<NetworkAttachment> {
    const port = await this.ownPort(portId, actor);
    const network = await this.networkOf(port);
    const existing = await this.deps.store.networks.byPort(port.id);
    if (existing) return existing;
    return this.deps.store.networks.create(
      {
        node_id: actor.node_id,
        project_id: port.project_id,
        lease_id: actor.lease_id,
        network_id: network.id,
        network_name: network.name,
        segmentation_id: network.segmentation_id,
        port_id: port.id,
        state: AttachmentState.Attaching,
        created_by: actor.user_name,
      },
      [],
      this.deps.clock.now(),
    );
  }

  /** After Ironic answered the gateway's VIF attach: the row is attached, or failed with Ironic's answer. */
  async settleVif(actor: NetworkActor, row: NetworkAttachment, ok: boolean, reason: string | null): Promise<void> {
    if (row.state !== AttachmentState.Attaching) return;
    const { store, clock } = this.deps;
    if (ok) {
      const event = this.event(actor, row, 'node.network_attached', `port ${row.port_id} (network ${row.network_name}) attached through the Ironic-compatible endpoint`);
      await store.networks.update(row.id, { state: AttachmentState.Attached }, [event], clock.now());
    } else await store.networks.update(row.id, { state: AttachmentState.Failed, last_error: reason }, [], clock.now());
  }

  private chooseNic(nics: readonly Nic[], network: Network, mac: string | null, nodeId: string): Nic {
    const choice = pickNic(nics, network, mac);
    if ('nic' in choice) return choice.nic;
    const macs = nics.map((n) => n.mac).join(', ') || 'none';
    switch (choice.refusal) {
      case 'no_such_mac':
        throw new InvalidRequestError(`node ${nodeId} has no NIC with MAC ${mac} (its NICs: ${macs})`, { details: { field: 'mac' } });
      case 'nic_in_use':
        throw new ConflictError(`the NIC ${mac} of node ${nodeId} already carries a network: detach it first`, { details: { mac } });
      case 'no_free_nic':
        throw new ConflictError(
          `node ${nodeId} has no free NIC${network.physical_network ? ` on physical network ${network.physical_network}` : ''} for ${network.name} (its NICs: ${macs}): detach one first`,
          { details: { physical_network: network.physical_network } },
        );
    }
  }

  /** A port the actor may plug in: its project's (any for the operator); a 404 for anything else. */
  private async ownPort(portId: string, actor: Pick<NetworkActor, 'project_id' | 'admin'>): Promise<NetworkPort> {
    const port = await this.deps.networks.getPort(portId);
    if (!port || !(actor.admin || port.project_id === actor.project_id)) throw new NotFoundError('port', portId);
    return port;
  }

  private async networkOf(port: Pick<NetworkPort, 'network_id'>): Promise<Network> {
    const network = await this.deps.networks.getNetwork(port.network_id);
    if (!network) throw new NotFoundError('network', port.network_id);
    return network;
  }

  private async taggedNetworks(refs: readonly string[], actor: NetworkActor, native: Network): Promise<Network[]> {
    if (refs.length === 0) return [];
    if (!(await this.deps.networks.supportsTrunks())) {
      throw new ConflictError("tagged networks need Neutron's trunk extension, which this cloud does not enable (service_plugins = trunk)", { details: { field: 'tagged' } });
    }
    const out: Network[] = [];
    for (const ref of refs) {
      const n = await this.resolveNetwork(ref, actor);
      if (n.id === native.id || out.some((o) => o.id === n.id)) throw new InvalidRequestError(`tagged: ${n.name} is given twice (or is the native network)`, { details: { field: 'tagged' } });
      if (n.segmentation_id === null) throw new InvalidRequestError(`tagged: ${n.name} has no VLAN id (a ${n.network_type ?? 'untyped'} network cannot be tagged)`, { details: { field: 'tagged' } });
      out.push(n);
    }
    return out;
  }

  /** A trunk whose parent is the attachment's port, with a subport per tagged network on its VLAN. */
  private async makeTrunk(row: NetworkAttachment, tagged: readonly Network[]): Promise<NetworkAttachment> {
    const { networks, store, clock } = this.deps;
    const trunk = await networks.createTrunk({ project_id: row.project_id, name: `leasehold-${row.id.slice(0, 8)}`, parent_port_id: row.port_id!, subports: [] });
    const withTrunk = await store.networks.update(row.id, { trunk_id: trunk.id, trunk_created: true }, [], clock.now());
    return this.addSubports(withTrunk, tagged);
  }

  private async addSubports(row: NetworkAttachment, tagged: readonly Network[]): Promise<NetworkAttachment> {
    const { networks, store, clock } = this.deps;
    let entries: TaggedNetwork[] = row.tagged.filter((t) => !tagged.some((n) => n.id === t.network_id) || t.port_id !== null);
    let current = row;
    for (const n of tagged) {
      const sub = await networks.createPort({ network_id: n.id, project_id: row.project_id, name: `leasehold-${row.node_id.slice(0, 8)}-${n.name}`.slice(0, 255), description: 'created by Leasehold (trunk subport)' });
      entries = [...entries.filter((t) => t.network_id !== n.id), { network_id: n.id, network_name: n.name, segmentation_id: n.segmentation_id, port_id: sub.id, port_created: true }];
      current = await store.networks.update(row.id, { tagged: entries }, [], clock.now());
      await networks.addSubports(row.trunk_id!, [{ port_id: sub.id, segmentation_type: 'vlan', segmentation_id: n.segmentation_id! }]);
    }
    return current;
  }

  private async findAttachment(actor: NetworkActor, ref: string): Promise<NetworkAttachment> {
    const rows = await this.deps.store.networks.live(actor.node_id);
    const mine = rows.filter((r) => actor.admin || actor.owner || r.project_id === actor.project_id);
    const byId = mine.find((r) => r.id === ref || r.port_id === ref);
    if (byId) return byId;
    const byNetwork = mine.filter((r) => r.network_id === ref || r.network_name === ref);
    if (byNetwork.length === 1) return byNetwork[0]!;
    if (byNetwork.length > 1) {
      throw new ConflictError(`${byNetwork.length} attachments of ${JSON.stringify(ref)} are on this node: name one by its id`, {
        details: { candidates: byNetwork.map((r) => r.id) },
      });
    }
    throw new NotFoundError('network attachment', ref);
  }

  /** A failed attach: take off whatever it made, mark the row failed with the reason. */
  private async undo(row: NetworkAttachment, actor: NetworkActor, err: unknown): Promise<void> {
    const reason = isLeaseholdError(err) ? err.message : 'internal error';
    try {
      const current = (await this.deps.store.networks.get(row.id)) ?? row;
      await this.deps.teardown.end(current, { actor: actor.user_name, actor_user_id: actor.user_id, lease_id: actor.lease_id, reason: `attach failed: ${reason}`, final: AttachmentState.Failed, quiet: true });
      const event = this.event(actor, current, 'node.network_attach_failed', `attaching network ${row.network_name} failed: ${reason}`, 'error');
      await this.deps.store.networks.update(row.id, { last_error: reason }, [event], this.deps.clock.now());
    } catch (cleanup) {
      // The row stays `attaching`/`detaching`: the reconciler finishes the undo (and logs it) on its next pass.
      this.deps.logger.warn({ err: cleanup, attachment_id: row.id }, 'could not undo a failed attach now; the reconciler will');
    }
  }

  private event(actor: NetworkActor, row: NetworkAttachment, type: string, message: string, outcome: 'ok' | 'error' = 'ok'): NewAuditEvent {
    return {
      type,
      outcome,
      actor: actor.user_name,
      actor_user_id: actor.user_id,
      node_id: row.node_id,
      lease_id: row.lease_id,
      project_id: row.project_id,
      message,
      details: { network_id: row.network_id, port_id: row.port_id, nic_id: row.nic_id, mac: row.mac, trunk_id: row.trunk_id },
    };
  }
}

function vlan(n: Pick<Network, 'segmentation_id' | 'network_type'>): string {
  return n.segmentation_id === null ? '' : ` (${n.network_type === 'vlan' ? 'VLAN ' : 'segment '}${n.segmentation_id})`;
}

/** Ports Leasehold creates are named after the node and the NIC, so an operator reading Neutron knows them. */
function portName(nodeId: string, nic: Nic): string {
  return `leasehold-${nodeId.slice(0, 8)}-${nic.mac.replace(/:/g, '')}`;
}
