/**
 * Leases that survive a failed node (pure: no I/O). When a node of an active or upcoming lease can no longer serve
 * it, the allocation is re-planned onto an equivalent node for the rest of the window; these say when a node has
 * failed, what "equivalent" means, and what the lease asked for on failure.
 */
import { SIZE_FACTS } from './expression/check.js';
import type { FactValue, NodeFacts } from './inventory.js';

/** What a lease wants done when one of its nodes fails (per lease, default `auto`). */
export const ReplacePolicy = {
  /** Re-plan the allocation onto an equivalent node at once. */
  Auto: 'auto',
  /** Record the failure (`lease.degraded`) and let the lessee ask for a replacement. */
  Ask: 'ask',
  /** Record the failure only: the lease keeps its node, such as it is. */
  Never: 'never',
} as const;
export type ReplacePolicy = (typeof ReplacePolicy)[keyof typeof ReplacePolicy];
export const REPLACE_POLICIES: readonly ReplacePolicy[] = Object.values(ReplacePolicy);

/** Why an allocation left its lease before the lease's end. */
export const LeaveReason = {
  /** The lessee gave the node back early (partial return). */
  Returned: 'returned',
  /** Another node took its place (a failure, the lessee's request, or the owner's reclaim). */
  Replaced: 'replaced',
  /** The owner took the node back with notice and no substitute could be found. */
  Reclaimed: 'reclaimed',
  /** The node failed and no substitute could be found (or the lease asked for none). */
  Failed: 'failed',
  /** A sub-lease's node: the parent lease's hold on it ended (domain/subleasing.ts). */
  ParentEnded: 'parent_ended',
} as const;
export type LeaveReason = (typeof LeaveReason)[keyof typeof LeaveReason];

/** Why a node cannot serve a lease. */
export const FailureKind = {
  Maintenance: 'maintenance',
  /** Ironic cannot tell the node's power state (its BMC does not answer, or a power action failed). */
  PowerFailure: 'power_failure',
  ProvisionError: 'provision_error',
  Quarantined: 'quarantined',
  Vanished: 'vanished',
  OfferWithdrawn: 'offer_withdrawn',
  /** The lessee asked for another node (it works, but misbehaves). */
  Requested: 'requested',
  /** The owner takes the node back with notice. */
  Reclaim: 'reclaim',
} as const;
export type FailureKind = (typeof FailureKind)[keyof typeof FailureKind];

export interface NodeFailure {
  readonly kind: FailureKind;
  /** In words, for events and the lessee: "node gpu-3 went into maintenance in Ironic (fan failure)". */
  readonly reason: string;
}

/** What the health check reads of a node (Ironic's fields, as the inventory holds them). */
export interface NodeHealth {
  readonly name: string | null;
  readonly maintenance: boolean;
  readonly maintenance_reason: string | null;
  /** Null: unknown — Ironic lost the BMC, or a power action failed (Ironic's power state `error` reads as null). */
  readonly power_state: string | null;
  readonly provision_state: string;
  readonly last_error: string | null;
  /** Quarantined by Leasehold after a failed cleaning. */
  readonly quarantined: boolean;
}

/**
 * Provision states in which a node cannot serve anyone until an operator acts. `deploy failed` is not among them: a
 * lessee's own deploy failing (a bad image) is the lessee's business, and it can deploy again.
 */
const BROKEN_STATES: readonly string[] = ['error', 'clean failed'];

/**
 * Whether a node has failed for its lease: in maintenance (its owner's or the operator's doing, or Ironic's own after
 * power sync failed), its power state unknown or in error, in a broken provision state, or quarantined after a failed
 * cleaning. Null: it serves.
 */
export function nodeFailure(node: NodeHealth, label = node.name ?? 'the node'): NodeFailure | null {
  if (node.maintenance) {
    return { kind: FailureKind.Maintenance, reason: `node ${label} went into maintenance in Ironic (${node.maintenance_reason ?? 'no reason given'})` };
  }
  // A node still being enrolled has no power state yet; any other should (Ironic reads it at `manage`).
  if (node.power_state === null && node.provision_state !== 'enroll') {
    return { kind: FailureKind.PowerFailure, reason: `Ironic cannot tell the power state of node ${label}${node.last_error ? ` (${node.last_error})` : ''}` };
  }
  if (BROKEN_STATES.includes(node.provision_state)) {
    return { kind: FailureKind.ProvisionError, reason: `node ${label} is in provision state "${node.provision_state}"${node.last_error ? ` (${node.last_error})` : ''}` };
  }
  if (node.quarantined) return { kind: FailureKind.Quarantined, reason: `node ${label} is quarantined after a failed cleaning` };
  return null;
}

/** Facts compared by value (a substitute must have the same), not by size (a substitute may have more). */
const SAME_VALUE_FACTS = new Set(['cpu_arch', 'resource_class']);
/** Facts that differ between identical machines and say nothing of what a lessee can use. */
const IGNORED_FACTS = new Set(['serial', 'serial_number', 'vendor_serial', 'asset_tag', 'bmc_address', 'root_device']);

/**
 * A requirement expression a substitute for a named node must meet: the same architecture and resource class, at
 * least as much of every numeric fact (memory, disk, CPUs, GPUs, ...), the same value of every other fact, and
 * every trait. Best fit then picks the smallest node that meets it, as for any group.
 */
export function equivalentRequirement(facts: NodeFacts, traits: readonly string[]): string {
  const terms: string[] = [];
  for (const key of Object.keys(facts).sort()) {
    if (IGNORED_FACTS.has(key) || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) continue;
    const value = facts[key] as FactValue;
    if (typeof value === 'number' && !SAME_VALUE_FACTS.has(key)) {
      // Sizes (memory, disk) are bytes: the language wants their unit said.
      if (value > 0) terms.push(`${key} >= ${value}${SIZE_FACTS.has(key) ? 'B' : ''}`);
    } else if (typeof value === 'string') {
      terms.push(`${key} == ${JSON.stringify(value)}`);
    } else if (typeof value === 'boolean') {
      terms.push(`${key} == ${value}`);
    }
  }
  for (const trait of [...traits].sort()) terms.push(`has ${trait}`);
  return terms.length > 0 ? terms.join(' and ') : 'cpus >= 0';
}

/** What the reconciler reads of an allocation to decide whether its node has failed for it. */
export interface HeldForCheck {
  /** A sub-lease: its parent allocation is the one replaced (which cuts the sub-lease), never the sub-lease itself. */
  readonly sublease?: boolean;
  readonly allocation_id: string;
  readonly lease_id: string;
  readonly node_id: string;
  readonly state: string;
  readonly end: Date;
  readonly lease_cancelled: boolean;
  readonly left?: boolean;
  readonly failure_kind?: string | null;
  readonly node_quarantined?: boolean;
}

export interface FailureFinding {
  readonly allocation_id: string;
  readonly lease_id: string;
  readonly node_id: string;
  /** The failure to act on, or null: the node serves again (a failure recorded earlier is over). */
  readonly failure: NodeFailure | null;
}

/**
 * The allocations whose node failed for them since last looked at (or recovered): still in a lease that is not
 * over, not already leaving it, and not already told about this kind of failure. `health(node)` is what Ironic
 * showed of the node in this pass, or null when Ironic no longer lists it.
 */
export function failureFindings(
  held: readonly HeldForCheck[],
  health: (nodeId: string) => Omit<NodeHealth, 'quarantined'> | null,
  now: Date,
): readonly FailureFinding[] {
  const out: FailureFinding[] = [];
  for (const h of held) {
    if (h.left || h.lease_cancelled || h.end.getTime() <= now.getTime() || h.sublease === true) continue;
    if (h.state !== 'reserved' && h.state !== 'starting' && h.state !== 'active') continue;
    const node = health(h.node_id);
    const failure: NodeFailure | null = node
      ? nodeFailure({ ...node, quarantined: h.node_quarantined === true })
      : { kind: FailureKind.Vanished, reason: `node ${h.node_id} no longer exists in Ironic` };
    const recorded = h.failure_kind ?? null;
    if (failure && failure.kind !== recorded) out.push({ allocation_id: h.allocation_id, lease_id: h.lease_id, node_id: h.node_id, failure });
    else if (!failure && recorded !== null) out.push({ allocation_id: h.allocation_id, lease_id: h.lease_id, node_id: h.node_id, failure: null });
  }
  return out;
}
