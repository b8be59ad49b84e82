import type { Clock, Timer } from '../../domain/clock.js';
import { NodeBusyError } from '../../domain/errors.js';
import type { Logger } from '../../logger.js';
import type { SimulatedHardwareStore, SimulatedNodeRow } from '../../domain/simulated-hardware-store.js';
import { ironicMessages } from './ironic-messages.js';
import { isSimulatedState, SIMULATED_HOST, stateOf, type SimulatedState, type StatefulNode } from './simulated-state.js';

/** A node as this module handles it: its state and its identity. */
export type SharedNode = StatefulNode & { readonly uuid: string; readonly name: string };

/** What the driver lends this module: its nodes, their VIFs, and how it finishes a node's work. */
export interface HardwareHost {
  node(uuid: string): SharedNode | undefined;
  vifsOf(uuid: string): Readonly<Record<string, string | null>>;
  /** Puts a stored state onto the node (and its NICs). */
  restore(node: SharedNode, state: SimulatedState): void;
  /** Finishes the stage of the node's work in progress now (it was taken over from another driver instance). */
  takeOver(node: SharedNode): void;
}

/**
 * Past its stage's end by this much, work another driver instance started is taken over (that instance stopped or
 * died). Its own timer fires at the end and writes within milliseconds; 2 s leaves room for a loaded machine.
 */
const TAKEOVER_GRACE_MS = 2_000;
/** After a failed write (the database away), the state is written again this much later. */
const RETRY_MS = 1_000;

/**
 * The simulated hardware kept in the store (migration 0016), for the one-command demo to survive a restart and for
 * replicas on one database to drive one hardware. Each call into the driver first reads what other instances
 * wrote since its last look (one indexed query that returns nothing when nothing changed); each change is written
 * back conditionally on the version this instance last saw, so of two instances acting on one node at once one
 * wins and the other's caller is told the node is busy (Ironic's lock error, which callers retry). A stage of work
 * ends by the timer of the instance that started it, or, when that instance is gone, by whichever instance finds
 * it overdue.
 */
export class SharedHardware {
  private watermark: string | null = null;
  private readonly versions = new Map<string, string>();
  /** Per node: the latest write queued or running, resolving to whether it won. */
  private readonly writes = new Map<string, Promise<boolean>>();
  /** Nodes changed since their queued write started (that write will carry the change). */
  private readonly dirtyNodes = new Set<string>();
  private readonly takeovers = new Map<string, Timer>();
  private pulling: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly store: SimulatedHardwareStore,
    private readonly host: HardwareHost,
    private readonly clock: Clock,
    readonly runner: string,
    private readonly logger?: Logger,
  ) {}

  /** Enrols the nodes not stored yet and takes the stored state of those that are (a restart keeps its hardware). */
  async open(nodes: readonly SharedNode[]): Promise<void> {
    await this.store.enrol(
      nodes.map((node) => ({ uuid: node.uuid, name: node.name, state: { ...stateOf(node, this.host.vifsOf(node.uuid)) } })),
      this.clock.now(),
    );
    await this.pull();
  }

  /** Reads what other instances wrote since the last look and puts it onto the nodes (one query; shared while running). */
  pull(): Promise<void> {
    this.pulling ??= this.read().finally(() => {
      this.pulling = null;
    });
    return this.pulling;
  }

  /** The node changed here: its state is written (after any write of it already under way). */
  changed(node: SharedNode): void {
    if (this.closed) return;
    if (this.dirtyNodes.has(node.uuid)) return;
    this.dirtyNodes.add(node.uuid);
    const before = this.writes.get(node.uuid) ?? Promise.resolve(true);
    const write = before.then(() => this.write(node));
    this.writes.set(node.uuid, write);
    void write.finally(() => {
      if (this.writes.get(node.uuid) === write) this.writes.delete(node.uuid);
    });
  }

  /**
   * Waits for the node's changes to be written: a caller's action is done when it is stored. NodeBusyError when
   * another instance changed the node first (its state is what the node now has); a database error as it came.
   */
  async settle(node: SharedNode): Promise<void> {
    const write = this.writes.get(node.uuid);
    if (write && !(await write)) {
      throw new NodeBusyError(ironicMessages.nodeLocked(node.uuid, SIMULATED_HOST), { details: { node: node.uuid, reservation: SIMULATED_HOST } });
    }
  }

  /** A node enrolled after the start (the operator's addNode). */
  enrolLater(node: SharedNode): void {
    void this.store
      .enrol([{ uuid: node.uuid, name: node.name, state: { ...stateOf(node, this.host.vifsOf(node.uuid)) } }], this.clock.now())
      .then((rows) => rows.forEach((row) => this.versions.set(row.uuid, row.version)))
      .catch((err: unknown) => this.logger?.warn({ err: String(err), node: node.uuid }, 'simulated hardware: enrolling a node failed'));
  }

  forget(uuid: string): void {
    this.takeovers.get(uuid)?.cancel();
    this.takeovers.delete(uuid);
    void this.store.remove(uuid).catch(() => undefined);
  }

  /** Resolves when every change made so far is stored (or its write was lost to another instance's). */
  async flush(): Promise<void> {
    while (this.writes.size > 0) await Promise.allSettled([...this.writes.values()]);
  }

  /** Stops taking work over and writes what is still unwritten: a clean stop loses nothing. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.takeovers.values()) timer.cancel();
    this.takeovers.clear();
    await this.flush();
  }

  private async read(): Promise<void> {
    const changes = await this.store.changes(this.watermark);
    for (const row of changes.nodes) this.apply(row);
    this.watermark = changes.watermark;
  }

  private apply(row: SimulatedNodeRow): void {
    const node = this.host.node(row.uuid);
    if (!node || !isSimulatedState(row.state)) return;
    const known = this.versions.get(row.uuid);
    if (known !== undefined && BigInt(row.version) <= BigInt(known)) return;
    // A write of ours is queued: it meets this version and loses (its caller hears busy), then the node is read again.
    if (this.writes.has(row.uuid)) return;
    this.versions.set(row.uuid, row.version);
    this.host.restore(node, row.state);
    this.arrangeTakeover(node);
  }

  private async write(node: SharedNode): Promise<boolean> {
    this.dirtyNodes.delete(node.uuid);
    const version = this.versions.get(node.uuid);
    if (version === undefined) return true; // not enrolled yet (open() is running): enrolment stores it as it is
    try {
      const row = await this.store.save(node.uuid, { ...stateOf(node, this.host.vifsOf(node.uuid)) }, version, this.clock.now());
      if (row) {
        this.versions.set(node.uuid, row.version);
        return true;
      }
    } catch (err) {
      // The database is away: the hardware goes on, and its state is written when it is back.
      this.logger?.warn({ err: String(err), node: node.uuid }, 'simulated hardware: writing a node failed; retrying');
      this.clock.setTimer(RETRY_MS, () => this.changed(node));
      return true;
    }
    // Another instance wrote first: its state is the node's now.
    this.writes.delete(node.uuid);
    await this.read().catch(() => undefined);
    return false;
  }

  /** Work another instance started is finished here if it is still unfinished some time after its stage's end. */
  private arrangeTakeover(node: SharedNode): void {
    this.takeovers.get(node.uuid)?.cancel();
    this.takeovers.delete(node.uuid);
    const op = node.op;
    if (!op || op.runner === this.runner || this.closed) return;
    const wait = Math.max(0, op.due_at + TAKEOVER_GRACE_MS - this.clock.now().getTime());
    this.takeovers.set(
      node.uuid,
      this.clock.setTimer(wait, () => {
        this.takeovers.delete(node.uuid);
        void this.takeOver(node, op.due_at).catch((err: unknown) => this.logger?.warn({ err: String(err), node: node.uuid }, 'simulated hardware: taking work over failed'));
      }),
    );
  }

  private async takeOver(node: SharedNode, due: number): Promise<void> {
    await this.pull();
    const op = node.op;
    if (!op || op.runner === this.runner || op.due_at !== due) return; // finished meanwhile, or taken
    node.op = { ...op, runner: this.runner };
    this.changed(node);
    const won = await (this.writes.get(node.uuid) ?? Promise.resolve(true));
    if (won && node.op?.runner === this.runner) this.host.takeOver(node);
  }
}
