import type { Clock, Timer } from '../domain/clock.js';
import { deriveFacts } from '../domain/node-facts.js';
import type { InventoryNode } from '../domain/inventory.js';
import type { DriverNode, HardwareDriver } from '../drivers/hardware-driver.js';
import type { Logger } from '../logger.js';
import type { NodeRecord, Store, SyncResult } from '../store/store.js';
import { BackendUnavailableError } from '../domain/errors.js';
import { Coalescer } from '../store/coalescer.js';

/** Maps the driver's view of a node to what the store keeps (typed facts derived, no secrets). */
export function toNodeRecord(node: DriverNode): NodeRecord {
  return {
    id: node.uuid,
    name: node.name,
    resource_class: node.resource_class,
    owner: node.owner,
    lessee: node.lessee,
    properties: node.properties,
    traits: [...node.traits].sort(),
    facts: deriveFacts(node.properties, node.resource_class),
    power_state: node.power_state,
    provision_state: node.provision_state,
    target_provision_state: node.target_provision_state,
    maintenance: node.maintenance,
    maintenance_reason: node.maintenance_reason,
    last_error: node.last_error,
    console_enabled: node.console_enabled,
    extra: node.extra,
    driver_updated_at: node.updated_at ? new Date(node.updated_at) : null,
  };
}

/**
 * Keeps the stored inventory equal to the driver's: at start, every `intervalMs`, and on demand. Runs are
 * serialised (a second request during a run waits for it and returns its result) so two overlapping syncs
 * never race each other's writes inside one process; across replicas every write is an idempotent upsert.
 */
export class InventorySync {
  private timer: Timer | null = null;
  private running: Promise<SyncResult> | null = null;
  private stopped = false;
  /**
   * Nodes recorded in one turn of the event loop are written in one statement: the engine's tasks in flight
   * record the node after each change they make (issue 15: 1,000 ends were 1,000 upserts each time).
   */
  private readonly recorder: Coalescer<{ readonly record: NodeRecord; readonly now: Date }, InventoryNode>;

  constructor(
    private readonly deps: {
      readonly driver: HardwareDriver;
      readonly store: Store;
      readonly clock: Clock;
      readonly logger: Logger;
      readonly intervalMs: number;
    },
  ) {
    this.recorder = new Coalescer(
      (items) => deps.store.upsertNodes(items.map((i) => i.record), new Date(Math.max(...items.map((i) => i.now.getTime())))),
      { maxBatch: 500, isolate: (err) => !(err instanceof BackendUnavailableError) },
    );
  }

  /** Syncs once now, then every interval. A failed first sync is logged, not fatal: the driver may come back. */
  async start(): Promise<void> {
    this.stopped = false;
    try {
      await this.syncAll();
    } catch (err) {
      this.deps.logger.warn({ err }, 'initial inventory sync failed; will retry');
    }
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
  }

  syncAll(): Promise<SyncResult> {
    this.running ??= this.runOnce().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Re-reads one node from the driver (after an action on it) so reads see its new state. */
  async refreshNode(id: string): Promise<InventoryNode> {
    return this.recordNode(await this.deps.driver.getNode(id));
  }

  /** Records a node as the driver just answered it (after a change), without asking the driver again. */
  recordNode(node: DriverNode): Promise<InventoryNode> {
    return this.recorder.submit({ record: toNodeRecord(node), now: this.deps.clock.now() });
  }

  /**
   * After an asynchronous action (power, provision), re-reads the node until its transition is over, so reads
   * through Leasehold show the new state within a moment instead of at the next full sync. Fire and forget:
   * bounded, and failures only mean the next sync catches up.
   */
  followNode(id: string, options: { readonly intervalMs?: number; readonly timeoutMs?: number } = {}): void {
    const interval = options.intervalMs ?? 200;
    const deadline = this.deps.clock.now().getTime() + (options.timeoutMs ?? 120_000);
    const step = async (): Promise<void> => {
      if (this.stopped) return;
      const node = await this.deps.driver.getNode(id);
      await this.deps.store.upsertNode(toNodeRecord(node), this.deps.clock.now());
      const settled = node.target_power_state === null && node.target_provision_state === null && node.reservation === null;
      if (!settled && this.deps.clock.now().getTime() < deadline) this.deps.clock.setTimer(interval, () => void step().catch(() => undefined));
    };
    this.deps.clock.setTimer(interval, () => void step().catch(() => undefined));
  }

  private async runOnce(): Promise<SyncResult> {
    const started = Date.now();
    const nodes = await this.deps.driver.listNodes();
    const result = await this.deps.store.syncNodes(nodes.map(toNodeRecord), this.deps.clock.now());
    const changed = result.added + result.updated + result.removed;
    this.deps.logger[changed > 0 ? 'info' : 'debug'](
      { ...result, nodes: nodes.length, ms: Date.now() - started },
      'inventory synced',
    );
    return result;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.deps.clock.setTimer(this.deps.intervalMs, () => {
      this.syncAll()
        .catch((err: unknown) => this.deps.logger.warn({ err }, 'inventory sync failed; will retry'))
        .finally(() => this.schedule());
    });
  }
}
