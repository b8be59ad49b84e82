/**
 * Where the simulated driver keeps its machines (migration 0016), so the demo's hardware survives a restart and
 * replicas on one database share it. The state is the driver's own document (drivers/simulated/simulated-state.ts);
 * the store only versions it. A port: the store implements it, the simulated driver uses it (both on floor 2).
 */
export interface SimulatedNodeRow {
  readonly uuid: string;
  readonly name: string;
  readonly state: Readonly<Record<string, unknown>>;
  /** Bumped by every write: what a conditional write names. */
  readonly version: string;
}

export interface SimulatedHardwareChanges {
  readonly nodes: readonly SimulatedNodeRow[];
  /** Pass back to read only what was written after this read (null at first: everything). */
  readonly watermark: string;
}

export interface SimulatedHardwareStore {
  /** The rows written since `watermark` (null: all of them), and the next watermark (as Store.planningChanges). */
  changes(watermark: string | null): Promise<SimulatedHardwareChanges>;
  /** Adds the nodes not stored yet, leaving stored ones as they are; answers every node's stored row. */
  enrol(nodes: readonly Omit<SimulatedNodeRow, 'version'>[], now: Date): Promise<readonly SimulatedNodeRow[]>;
  /** Writes a node's state if its version is still `version`: the new row, or null when another writer came first. */
  save(uuid: string, state: Readonly<Record<string, unknown>>, version: string, now: Date): Promise<SimulatedNodeRow | null>;
  /** Forgets a node (it left the hardware). */
  remove(uuid: string): Promise<void>;
}
