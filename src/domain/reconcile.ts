import { AllocationState } from './leasing.js';

/**
 * Reconciliation: what must change in Ironic (or in the store) so that the two agree again. Pure: it compares
 * what Ironic shows with the allocations the store holds, at `now`, and lists the repairs; the reconciler
 * (engine/reconciler.ts) re-checks each against Ironic and carries it out.
 *
 * The rule is the invariant of the product: a node's `lessee` in Ironic names the project of the lease that
 * holds it right now (with `extra.leasehold_lease` naming that lease), and nobody otherwise. Drift comes from
 * people editing Ironic by hand, from a crash or a missed end, and from nodes that vanish or go into maintenance.
 *
 * What the lease engine is doing right now is left to it: a hand-over that is due or under way (the start task
 * writes the lessee), and an end younger than `graceMs` (the end task clears it within moments). Past the grace
 * the reconciler clears a lessee itself: the end task may be held by a crashed replica's claim for a minute.
 */

/** A node as Ironic shows it, reduced to what reconciliation reads. */
export interface ObservedNode {
  readonly id: string;
  readonly lessee: string | null;
  /** `extra.leasehold_lease`: the lease Leasehold handed the node over for. */
  readonly lease_mark: string | null;
  readonly maintenance: boolean;
  readonly maintenance_reason: string | null;
}

/** An allocation that is not finished (reserved, starting, active or releasing), with its lease's facts. */
export interface Holding {
  readonly allocation_id: string;
  readonly lease_id: string;
  /** The lessee project. */
  readonly project_id: string;
  readonly node_id: string;
  readonly state: AllocationState;
  readonly start: Date;
  readonly end: Date;
  readonly lease_cancelled: boolean;
  /** Since when the reconciler has seen this node in maintenance for this allocation (null: not seen). */
  readonly node_maintenance_at: Date | null;
  /** The allocation is leaving its lease early (replaced, returned, reclaimed): no failure of its node matters. */
  readonly left?: boolean;
  /** The kind of node failure already recorded on the allocation (the lease kept the node), or null. */
  readonly failure_kind?: string | null;
  /** Leasehold quarantined the node after a failed cleaning. */
  readonly node_quarantined?: boolean;
  /** A sub-lease (domain/subleasing.ts): while in its window, its lessee holds the node, not its parent's. */
  readonly sublease?: boolean;
}

export const RepairKind = {
  /** A lessee (or lease mark) on a node nobody holds now: set by hand, or left behind by a crash or missed end. */
  ClearLessee: 'clear_lessee',
  /** The lessee of an active allocation was changed or removed in Ironic: set it back. */
  RestoreLessee: 'restore_lessee',
  /** The node of an unfinished allocation is no longer in Ironic: the allocation is dropped. */
  NodeVanished: 'node_vanished',
  /** The node of an upcoming or running allocation went into maintenance: the lessee is told. */
  MaintenanceStarted: 'maintenance_started',
  MaintenanceEnded: 'maintenance_ended',
} as const;

export type Repair =
  | {
      readonly kind: typeof RepairKind.ClearLessee;
      readonly node_id: string;
      readonly found_lessee: string | null;
      readonly found_lease_mark: string | null;
      /** `no_lease`: nothing Leasehold did explains it; `lease_over`: a finished lease's hand-over left behind. */
      readonly reason: 'no_lease' | 'lease_over';
      /** The lease that left it behind, when known from the store. */
      readonly holding: Holding | null;
    }
  | {
      readonly kind: typeof RepairKind.RestoreLessee;
      readonly node_id: string;
      readonly found_lessee: string | null;
      readonly found_lease_mark: string | null;
      readonly holding: Holding;
    }
  | { readonly kind: typeof RepairKind.NodeVanished; readonly node_id: string; readonly holding: Holding }
  | {
      readonly kind: typeof RepairKind.MaintenanceStarted;
      readonly node_id: string;
      readonly reason: string | null;
      readonly holding: Holding;
    }
  | { readonly kind: typeof RepairKind.MaintenanceEnded; readonly node_id: string; readonly holding: Holding };

const UNFINISHED: readonly AllocationState[] = [
  AllocationState.Reserved,
  AllocationState.Starting,
  AllocationState.Active,
  AllocationState.Releasing,
];
/** Allocations that hold (or will hold) their node for a lessee: not yet ending. */
const HOLDING: readonly AllocationState[] = [AllocationState.Reserved, AllocationState.Starting, AllocationState.Active];

function inWindow(h: Holding, t: number): boolean {
  return h.start.getTime() <= t && t < h.end.getTime();
}

/** The repairs that make Ironic and the store agree at `now`, node by node (in the order of `nodes`). */
export function planRepairs(
  nodes: readonly ObservedNode[],
  holdings: readonly Holding[],
  now: Date,
  graceMs: number,
): readonly Repair[] {
  const t = now.getTime();
  const byNode = new Map<string, Holding[]>();
  for (const h of holdings) {
    if (!UNFINISHED.includes(h.state)) continue;
    const list = byNode.get(h.node_id);
    if (list) list.push(h);
    else byNode.set(h.node_id, [h]);
  }
  const repairs: Repair[] = [];
  const seen = new Set<string>();

  for (const node of nodes) {
    seen.add(node.id);
    const hs = byNode.get(node.id) ?? [];
    const lessee = planLessee(node, hs, t, graceMs);
    if (lessee) repairs.push(lessee);
    for (const h of hs) {
      if (!HOLDING.includes(h.state) || h.lease_cancelled || t >= h.end.getTime()) continue;
      if (node.maintenance && h.node_maintenance_at === null) {
        repairs.push({ kind: RepairKind.MaintenanceStarted, node_id: node.id, reason: node.maintenance_reason, holding: h });
      } else if (!node.maintenance && h.node_maintenance_at !== null) {
        repairs.push({ kind: RepairKind.MaintenanceEnded, node_id: node.id, holding: h });
      }
    }
  }

  // Nodes gone from Ironic: allocations still to hand over or handed over cannot be served. (Releasing ones are
  // the end task's: it quarantines an allocation whose node vanished while being cleaned.)
  for (const [nodeId, hs] of byNode) {
    if (seen.has(nodeId)) continue;
    for (const h of hs) {
      if (HOLDING.includes(h.state) && t < h.end.getTime()) repairs.push({ kind: RepairKind.NodeVanished, node_id: nodeId, holding: h });
    }
  }
  return repairs;
}

function planLessee(node: ObservedNode, hs: readonly Holding[], t: number, graceMs: number): Repair | null {
  const holdsNow = (h: Holding) => HOLDING.includes(h.state) && !h.lease_cancelled && inWindow(h, t);
  // A sub-lease in its window holds the node; its parent's lessee gets it back when it ends.
  const current = hs.find((h) => h.sublease === true && holdsNow(h)) ?? hs.find(holdsNow);
  if (current) {
    // A hand-over that is due or under way is the start task's to finish.
    if (current.state !== AllocationState.Active) return null;
    if (node.lessee === current.project_id && node.lease_mark === current.lease_id) return null;
    return {
      kind: RepairKind.RestoreLessee,
      node_id: node.id,
      found_lessee: node.lessee,
      found_lease_mark: node.lease_mark,
      holding: current,
    };
  }
  if (node.lessee === null && node.lease_mark === null) return null;
  // A hand-over whose lease has just ended is the end task's to take back; past the grace it is overdue.
  if (hs.some((h) => h.end.getTime() <= t && t < h.end.getTime() + graceMs)) return null;
  const holding = hs.find((h) => h.lease_id === node.lease_mark) ?? null;
  return {
    kind: RepairKind.ClearLessee,
    node_id: node.id,
    found_lessee: node.lessee,
    found_lease_mark: node.lease_mark,
    reason: node.lease_mark !== null ? 'lease_over' : 'no_lease',
    holding,
  };
}
