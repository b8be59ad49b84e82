/** A node as Leasehold stores and shows it: the driver's view plus typed facts (pure data). */

/**
 * Typed facts used by requirement expressions. Sizes are bytes (memory from `memory_mb` × 2^20, disk from
 * `local_gb` × 2^30, as Ironic means MiB and GiB); every other property (and each `capabilities` pair) is kept
 * under its own name as a number when it parses as one, else as a string.
 */
export type FactValue = number | string | boolean;
export type NodeFacts = Readonly<Record<string, FactValue>>;

export interface InventoryNode {
  /** The driver's uuid. */
  readonly id: string;
  readonly name: string | null;
  readonly resource_class: string | null;
  /** Raw Ironic `owner`: a project id or name. */
  readonly owner: string | null;
  readonly lessee: string | null;
  readonly properties: Readonly<Record<string, unknown>>;
  readonly traits: readonly string[];
  readonly facts: NodeFacts;
  readonly power_state: string | null;
  readonly provision_state: string;
  readonly target_provision_state: string | null;
  readonly maintenance: boolean;
  readonly maintenance_reason: string | null;
  readonly last_error: string | null;
  readonly console_enabled: boolean;
  readonly extra: Readonly<Record<string, unknown>>;
  readonly driver_updated_at: Date | null;
  readonly synced_at: Date;
}

/** An inventory node with its owner resolved to a project (if one by that id or name exists). */
export interface NodeView extends InventoryNode {
  readonly owner_project: { readonly id: string; readonly name: string } | null;
  /** Set when cleaning failed: no new leases until the owner or the operator clears it. */
  readonly quarantined_at: Date | null;
  readonly quarantine_reason: string | null;
}

/**
 * What planning reads of a node: the facts and traits expressions test, what best fit ranks by, and what decides
 * whether the node may serve a window (health, owner). Each replica keeps these in memory (the planning index).
 */
export type PlanNode = Pick<
  NodeView,
  'id' | 'name' | 'facts' | 'traits' | 'maintenance' | 'maintenance_reason' | 'provision_state' | 'owner_project' | 'quarantined_at'
>;
