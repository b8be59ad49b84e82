import type { Clock } from '../domain/clock.js';
import type { NewAuditEvent } from '../domain/leasing.js';
import { AttachmentState, vifsToRemove, type NetworkAttachment, type VifVerdict } from '../domain/networks.js';
import type { AccessGuard, DriverNode, HardwareDriver } from '../drivers/hardware-driver.js';
import type { NetworkBackend } from '../drivers/network-backend.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/store.js';

export interface NetworkTeardownDeps {
  readonly store: Store;
  readonly driver: HardwareDriver;
  readonly networks: NetworkBackend;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** Who ends an attachment and why, for its events. */
export interface TeardownContext {
  readonly actor: string;
  readonly actor_user_id?: string | null;
  readonly lease_id?: string | null;
  /** Why, in words: "lease over", "detached by alice", "not the node's owner's nor its lessee's". */
  readonly reason: string;
  /** A caller's detach carries its access guard (nothing it sends reaches Ironic after its lease ended). */
  readonly guard?: AccessGuard;
  /** The state the attachment ends in: `detached` (default), or `failed` when undoing an attach that did not complete. */
  readonly final?: typeof AttachmentState.Detached | typeof AttachmentState.Failed;
  /** Records no `node.network_detached` event (the caller records its own: a failed attach). */
  readonly quiet?: boolean;
  /** A repair of the reconciler's: its events are `reconcile.*`. */
  readonly repair?: boolean;
}

/**
 * Takes networks off nodes: one attachment (a caller's detach), or everything on a node that does not belong to the
 * projects allowed there (a lease's end, a repair). Each attachment goes `detaching` before anything is touched and
 * `detached` after; in between, every step looks first (is the VIF still plugged? does the port still exist?), so a
 * run cut short by a crash is simply run again. The order is Neutron's: unplug the VIF (Ironic unbinds the port),
 * then the trunk (Neutron refuses to delete one in use), then the ports Leasehold created.
 */
export class NetworkTeardown {
  constructor(private readonly deps: NetworkTeardownDeps) {}

  get backend(): NetworkBackend {
    return this.deps.networks;
  }

  /**
   * The project ids a node's owner goes by: Ironic's raw `owner` (a Keystone project id in a cloud) and the project it
   * resolves to here (by id or name).
   */
  async ownerProjects(node: Pick<DriverNode, 'uuid' | 'owner'>): Promise<readonly string[]> {
    if (node.owner === null) return [];
    const view = await this.deps.store.getNode(node.uuid, { kind: 'all' });
    return [...new Set([node.owner, ...(view?.owner_project ? [view.owner_project.id] : [])])];
  }

  /** Ends one attachment; returns it as it ends (`detached`). */
  async end(attachment: NetworkAttachment, ctx: TeardownContext): Promise<NetworkAttachment> {
    const att = await this.unplug(attachment, ctx);
    return this.finish(att, ctx);
  }

  /**
   * Takes off the node everything that does not belong to `keep` (project ids: its owner's, and a lessee's whose
   * access goes on): the recorded attachments of other projects, then any VIF still plugged whose port is not one
   * of `keep`'s — a port plugged behind Leasehold's back, or one whose port is gone. Every VIF is unplugged first
   * (one at a time: each holds the node's lock in Ironic), then Neutron's ports and trunks go, side by side — so
   * the node is off the lessee's networks as soon as Ironic allows. Returns what it removed.
   */
  async clearNode(nodeId: string, keep: readonly string[], ctx: TeardownContext): Promise<{ readonly attachments: number; readonly vifs: number }> {
    const rows = (await this.deps.store.networks.live(nodeId)).filter((att) => !keep.includes(att.project_id));
    const unplugged: NetworkAttachment[] = [];
    for (const att of rows) unplugged.push(await this.unplug(att, ctx));
    const verdicts = await this.strayVifs(nodeId, keep);
    for (const verdict of verdicts) await this.removeVif(verdict, ctx);
    await Promise.all(unplugged.map((att) => this.finish(att, ctx)));
    return { attachments: rows.length, vifs: verdicts.length };
  }

  /** The attachment `detaching`, its VIF unplugged (if it still is). */
  private async unplug(attachment: NetworkAttachment, ctx: TeardownContext): Promise<NetworkAttachment> {
    const { store, driver } = this.deps;
    let att = attachment;
    if (att.state !== AttachmentState.Detaching) att = await store.networks.update(att.id, { state: AttachmentState.Detaching }, [], this.now());
    if (att.port_id !== null) {
      const plugged = (await driver.listNics(att.node_id)).some((nic) => nic.vif === att.port_id);
      if (plugged) await driver.detachVif(att.node_id, att.port_id, { guard: ctx.guard });
    }
    return att;
  }

  /** What Leasehold made for an unplugged attachment deleted (trunk first: Neutron keeps one in use), the row ended. */
  private async finish(att: NetworkAttachment, ctx: TeardownContext): Promise<NetworkAttachment> {
    const { store, networks } = this.deps;
    if (att.trunk_id !== null && att.trunk_created) await networks.deleteTrunk(att.trunk_id);
    else if (att.trunk_id !== null) {
      const ours = att.tagged.filter((t) => t.port_created && t.port_id !== null).map((t) => t.port_id!);
      if (ours.length > 0 && (await networks.getTrunk(att.trunk_id))) await networks.removeSubports(att.trunk_id, ours);
    }
    const made = [...att.tagged.filter((t) => t.port_created).map((t) => t.port_id), att.port_created ? att.port_id : null];
    await Promise.all(made.flatMap((id) => (id === null ? [] : [networks.deletePort(id)])));
    const final = ctx.final ?? AttachmentState.Detached;
    const ended = await store.networks.update(att.id, { state: final }, ctx.quiet ? [] : [this.event(att, ctx)], this.now());
    this.deps.logger.info({ node_id: att.node_id, attachment_id: att.id, network_id: att.network_id, reason: ctx.reason }, 'network detached');
    return ended;
  }

  /** The VIFs on `nodeId` that must go when only `keep` may have networks there. */
  async strayVifs(nodeId: string, keep: readonly string[]): Promise<readonly VifVerdict[]> {
    const nics = await this.deps.driver.listNics(nodeId);
    const vifs = nics.flatMap((nic) => (nic.vif === null ? [] : [nic.vif]));
    if (vifs.length === 0) return [];
    const ports = await this.deps.networks.getPorts(vifs);
    return vifsToRemove(nics, ports, () => keep);
  }

  /** Unplugs a VIF Leasehold did not (or no longer) record, ending its attachment row if one is still live. */
  async removeVif(verdict: VifVerdict, ctx: TeardownContext): Promise<void> {
    const row = await this.deps.store.networks.byPort(verdict.vif);
    if (row) {
      await this.end(row, ctx);
      return;
    }
    await this.deps.driver.detachVif(verdict.node_id, verdict.vif, { guard: ctx.guard });
    const whose = verdict.port_project_id === null ? 'a Neutron port that no longer exists' : `port ${verdict.vif} of project ${verdict.port_project_id}`;
    await this.deps.store.networks.record(
      [
        {
          type: ctx.repair ? 'reconcile.vif_removed' : 'node.vif_removed',
          actor: ctx.actor,
          node_id: verdict.node_id,
          lease_id: ctx.lease_id ?? null,
          project_id: verdict.port_project_id,
          message: `VIF ${verdict.vif} removed (${whose}): ${ctx.reason}`,
          details: { vif: verdict.vif, port_project_id: verdict.port_project_id, reason: verdict.reason },
        },
      ],
      this.now(),
    );
    this.deps.logger.warn({ node_id: verdict.node_id, vif: verdict.vif, reason: verdict.reason }, 'stray VIF removed');
  }

  private event(att: NetworkAttachment, ctx: TeardownContext): NewAuditEvent {
    return {
      type: ctx.repair ? 'reconcile.network_detached' : 'node.network_detached',
      actor: ctx.actor,
      actor_user_id: ctx.actor_user_id ?? null,
      node_id: att.node_id,
      lease_id: ctx.lease_id ?? null,
      project_id: att.project_id,
      message: `network ${att.network_name} detached (${ctx.reason})${att.port_created ? '; its port deleted' : ''}`,
      details: { network_id: att.network_id, port_id: att.port_id, nic_id: att.nic_id, trunk_id: att.trunk_id, reason: ctx.reason },
    };
  }

  private now(): Date {
    return this.deps.clock.now();
  }
}
