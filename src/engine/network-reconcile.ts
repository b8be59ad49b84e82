import { AllocationState } from '../domain/leasing.js';
import { AttachmentState, vifsToRemove } from '../domain/networks.js';
import type { Holding } from '../domain/reconcile.js';
import type { DriverNode, HardwareDriver } from '../drivers/hardware-driver.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/store.js';
import type { NetworkTeardown } from './network-teardown.js';

/**
 * An attach or detach whose row has not moved for this long was cut short (its replica stopped mid-way): the
 * reconciler finishes it. A live attach takes ≈ 1-2 s against a real Ironic and Neutron, so two minutes never
 * catches one that is still running.
 */
export const STALE_ATTACHMENT_MS = 120_000;

/**
 * A lessee's networks may stay while its allocation holds the node: being handed over, active, being released — or
 * still `reserved` past its start (access is decided from the lease's times, so it may attach before the engine ran).
 */
function holds(h: Holding, now: Date): boolean {
  if (h.lease_cancelled) return false;
  if (h.state === AllocationState.Reserved) return h.start.getTime() <= now.getTime();
  return h.state === AllocationState.Starting || h.state === AllocationState.Active || h.state === AllocationState.Releasing;
}

export interface NetworkRepairs {
  /** Attachments an interrupted attach or detach left half-way, now finished. */
  readonly finished: number;
  /** VIFs taken off nodes where neither the owner nor a current lessee holds the port. */
  readonly removed: number;
}

/**
 * The network half of a reconcile pass: Ironic's VIFs (read first, like the nodes) against who may have networks on
 * each node now — its owner, and the project whose allocation holds it — and Leasehold's attachment rows. A VIF of
 * anyone else (a former lessee's left by a crash, another tenant's plugged behind Leasehold's back, one whose port
 * was deleted) is unplugged, each re-checked just before and recorded as a `reconcile.*` event.
 */
export async function reconcileNetworks(
  deps: { readonly store: Store; readonly driver: HardwareDriver; readonly teardown: NetworkTeardown; readonly logger: Logger },
  nodes: readonly DriverNode[],
  holdings: readonly Holding[],
  now: Date,
): Promise<NetworkRepairs> {
  const { store, driver, teardown, logger } = deps;
  const nics = await driver.listVifNics();
  let finished = 0;
  for (const row of await store.networks.allLive()) {
    if (row.state === AttachmentState.Attached || now.getTime() - row.updated_at.getTime() < STALE_ATTACHMENT_MS) continue;
    const plugged = row.port_id !== null && nics.some((n) => n.node_id === row.node_id && n.vif === row.port_id);
    try {
      if (row.state === AttachmentState.Attaching && plugged) {
        await store.networks.update(row.id, { state: AttachmentState.Attached }, [], now);
      } else {
        const attaching = row.state === AttachmentState.Attaching;
        await teardown.end(row, {
          actor: 'engine',
          lease_id: row.lease_id,
          reason: `${attaching ? 'an attach' : 'a detach'} was interrupted (a replica stopped mid-way): finished by the reconciler`,
          final: attaching ? AttachmentState.Failed : AttachmentState.Detached,
          repair: true,
        });
      }
      finished++;
    } catch (err) {
      logger.warn({ err, attachment_id: row.id }, 'could not finish an interrupted attachment; retried next pass');
    }
  }

  const vifs = nics.flatMap((n) => (n.vif === null ? [] : [n.vif]));
  if (vifs.length === 0) return { finished, removed: 0 };
  const ports = await teardown.backend.getPorts(vifs);
  const byId = new Map(nodes.map((n) => [n.uuid, n]));
  const holders = new Map<string, string[]>();
  for (const nodeId of new Set(nics.map((n) => n.node_id))) {
    const node = byId.get(nodeId);
    const owners = node ? await teardown.ownerProjects(node) : [];
    const lessees = holdings.filter((h) => h.node_id === nodeId && holds(h, now)).map((h) => h.project_id);
    holders.set(nodeId, [...owners, ...lessees]);
  }
  let removed = 0;
  for (const verdict of vifsToRemove(nics, ports, (id) => holders.get(id) ?? [])) {
    try {
      // Re-checked just before: the VIF may have been detached (or the node handed over) since the list.
      const still = (await driver.listNics(verdict.node_id)).some((n) => n.vif === verdict.vif);
      if (!still) continue;
      const reason = verdict.reason === 'port_gone' ? 'its Neutron port no longer exists' : "the port is neither the node owner's nor its current lessee's";
      await teardown.removeVif(verdict, { actor: 'engine', reason, repair: true });
      removed++;
    } catch (err) {
      logger.warn({ err, node_id: verdict.node_id, vif: verdict.vif }, 'could not remove a stray VIF; retried next pass');
    }
  }
  return { finished, removed };
}
