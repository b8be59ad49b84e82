import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock, Timer } from '../domain/clock.js';
import { NotFoundError } from '../domain/errors.js';
import { noMetrics, type Metrics } from '../domain/metrics.js';
import { AllocationState, type NewAuditEvent } from '../domain/leasing.js';
import { planRepairs, RepairKind, type Holding, type ObservedNode, type Repair } from '../domain/reconcile.js';
import type { DriverNode, HardwareDriver } from '../drivers/hardware-driver.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/store.js';
import type { InventorySync } from './inventory-sync.js';
import { reconcileNetworks, type NetworkRepairs } from './network-reconcile.js';
import { failureFindings, type FailureFinding } from '../domain/replacement.js';
import type { NetworkTeardown } from './network-teardown.js';
import { clearLeaseMark, leaseMarkOf, setLeaseMark } from '../drivers/lessee-mark.js';

export interface ReconcilerOptions {
  readonly store: Store;
  readonly driver: HardwareDriver;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly inventory: InventorySync;
  /** Woken when the driver comes back after failing, so backed-off lease tasks run at once. */
  readonly engine?: { wake(): void };
  /** Between passes. */
  readonly intervalMs: number;
  /** How long after a lease's end its lessee is left to the end task. Default 15 s. */
  readonly graceMs?: number;
  /** Names this replica as the holder of the reconcile lock. Default: host, pid and a random suffix. */
  readonly holder?: string;
  /** Tenant networks (a network backend is configured): stray VIFs and interrupted attachments are repaired too. */
  readonly networks?: NetworkTeardown | null;
  /**
   * A node of a running or upcoming lease failed for it, or serves again (`failure` null): the leasing side
   * replaces it or records it (leasing/lifecycle-service.ts). Unset: failures are not acted on.
   */
  readonly onNodeFailure?: (finding: FailureFinding) => Promise<unknown>;
  /**
   * Between quick looks for failed leased nodes (maintenance, `error`, `clean failed`) between full passes, so a
   * lease gets its substitute within this rather than within `intervalMs`. 0 or unset: full passes only.
   */
  readonly failureWatchMs?: number;
  /** Where each pass's duration and the repairs carried out (by kind) are reported. */
  readonly metrics?: Metrics;
}

export interface ReconcileResult {
  /** `busy`: another replica is reconciling right now (one pass at a time, so no repair is made twice). */
  readonly skipped: 'busy' | null;
  readonly nodes: number;
  readonly repairs: readonly Repair[];
  /** Repairs carried out (the others were no longer needed when re-checked, or failed and are retried next pass). */
  readonly applied: number;
  /** Nodes that failed for their lease (or recovered) handed to the leasing side in this pass. */
  readonly failures: number;
  /** Network repairs: interrupted attachments finished, stray VIFs removed (zeros without a network backend). */
  readonly networks: NetworkRepairs;
  readonly ms: number;
}

const LEADER_LEASE = 'reconciler';
const NO_NETWORK_REPAIRS: NetworkRepairs = { finished: 0, removed: 0 };
/**
 * How long the reconcile lock lasts past its holder's last renewal; a pass renews it every third of this while it
 * runs (one at 10k nodes takes about a second, a slow Ironic longer). A replica killed mid-pass is taken over
 * within this (it was a fixed 120 s before issue 11).
 */
export const PASS_LOCK_MS = 15_000;
/** First retry after a failed pass (the backend is down); doubles up to the interval. */
const FIRST_RETRY_MS = 1_000;

/**
 * Compares Ironic with the store and repairs drift (domain/reconcile.ts says what counts as drift): right after
 * start, then every `intervalMs`. Each repair is re-checked against Ironic just before it is made (the node may
 * have changed since the list) and recorded as a `reconcile.*` event.
 *
 * Passes never overlap across replicas (a lock row in the store, held for the pass), so two replicas never make,
 * and log, the same repair twice.
 *
 * While the driver cannot be reached, passes are retried quickly (1 s doubling up to the interval); the first pass
 * that succeeds again makes the lease engine's backed-off tasks due at once, so it catches up within moments.
 */
export class Reconciler {
  readonly holder: string;
  private readonly log: Logger;
  private readonly graceMs: number;
  private timer: Timer | null = null;
  private watchTimer: Timer | null = null;
  private watching: Promise<number> | null = null;
  private running: Promise<ReconcileResult> | null = null;
  private started = false;
  private failures = 0;

  constructor(private readonly options: ReconcilerOptions) {
    this.holder = options.holder ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.graceMs = options.graceMs ?? 15_000;
    this.log = options.logger.child({ component: 'reconciler' });
  }

  /** Reconciles now (in the background), then every interval. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.log.info({ interval_ms: this.options.intervalMs, grace_ms: this.graceMs, failure_watch_ms: this.options.failureWatchMs ?? 0 }, 'reconciler started');
    this.tick();
    this.scheduleWatch();
  }

  /** Stops the timer and waits for a pass in progress. */
  async stop(): Promise<void> {
    this.started = false;
    this.timer?.cancel();
    this.timer = null;
    this.watchTimer?.cancel();
    this.watchTimer = null;
    await this.running?.catch(() => undefined);
  }

  /**
   * One quick look for failed leased nodes: the driver's few troubled nodes (no full list), acted on like a full
   * pass acts on failures — under the same lock, and skipped while a pass runs here (it does the same, fully).
   * Returns how many findings were handed over. Recoveries and vanished nodes wait for the full pass.
   */
  async watchFailures(): Promise<number> {
    if (!this.options.onNodeFailure || this.running || this.watching) return 0;
    this.watching = this.watchOnce().finally(() => {
      this.watching = null;
    });
    return this.watching;
  }

  private async watchOnce(): Promise<number> {
    const { store, driver, clock } = this.options;
    const troubled = await driver.listTroubledNodes();
    if (troubled.length === 0) return 0;
    const byId = new Map(troubled.map((n) => [n.uuid, n]));
    const holdings = (await store.tasks.holdings()).filter((h) => byId.has(h.node_id));
    if (failureFindings(holdings, (id) => byId.get(id) ?? null, clock.now()).every((f) => f.failure === null)) return 0;
    if (!(await store.tasks.tryLeaderLease(LEADER_LEASE, this.holder, clock.now(), PASS_LOCK_MS))) return 0;
    try {
      // Read again under the lock: a pass that just ended may have acted on them already.
      return await this.actOnFailures(troubled, (await store.tasks.holdings()).filter((h) => byId.has(h.node_id)), { failuresOnly: true });
    } finally {
      await store.tasks.dropLeaderLease(LEADER_LEASE, this.holder).catch((err: unknown) => this.log.warn({ err }, 'could not release the reconcile lock'));
    }
  }

  private scheduleWatch(): void {
    const every = this.options.failureWatchMs ?? 0;
    if (!this.started || every <= 0) return;
    this.watchTimer = this.options.clock.setTimer(every, () => {
      this.watchFailures()
        .then((acted) => {
          if (acted > 0) this.log.info({ failures: acted }, 'failed leased nodes handed over between passes');
        })
        .catch((err: unknown) => this.log.debug({ err }, 'failure watch could not look; the next pass will'))
        .finally(() => this.scheduleWatch());
    });
  }

  /** One pass (a pass in progress is shared). Throws when the driver or the store cannot be read. */
  reconcile(): Promise<ReconcileResult> {
    // After a quick look in progress: both hold the one lock under this replica's name.
    const watching = this.watching;
    this.running ??= (watching ? watching.catch(() => 0).then(() => this.pass()) : this.pass()).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private tick(): void {
    this.reconcile()
      .then(() => {
        this.failures = 0;
      })
      .catch((err: unknown) => {
        this.failures++;
        this.log.warn({ err, failures: this.failures }, 'reconciliation failed; retrying');
      })
      .finally(() => {
        if (!this.started) return;
        const delay = this.failures === 0 ? this.options.intervalMs : Math.min(this.options.intervalMs, FIRST_RETRY_MS * 2 ** (this.failures - 1));
        this.timer = this.options.clock.setTimer(delay, () => this.tick());
      });
  }

  /** A pass, timed and reported (the quick failure watch is not a pass). */
  private async pass(): Promise<ReconcileResult> {
    const metrics = this.options.metrics ?? noMetrics;
    const started = performance.now();
    try {
      const result = await this.lockedPass();
      metrics.reconcilePass(result.skipped ? 'skipped' : 'ok', (performance.now() - started) / 1000);
      return result;
    } catch (err) {
      metrics.reconcilePass('failed', (performance.now() - started) / 1000);
      throw err;
    }
  }

  private async lockedPass(): Promise<ReconcileResult> {
    const { store, clock } = this.options;
    const t0 = Date.now();
    // Held for the pass only: passes never overlap, yet any replica may run the next one, and a process that
    // restarts after a crash reconciles at once. A holder that dies mid-pass is taken over within PASS_LOCK_MS.
    if (!(await store.tasks.tryLeaderLease(LEADER_LEASE, this.holder, clock.now(), PASS_LOCK_MS))) {
      this.log.debug('another replica is reconciling');
      return { skipped: 'busy', nodes: 0, repairs: [], applied: 0, failures: 0, networks: NO_NETWORK_REPAIRS, ms: Date.now() - t0 };
    }
    const lock: { timer: Timer | null; held: boolean; renewing: Promise<unknown> | null } = { timer: null, held: true, renewing: null };
    const renew = () => {
      lock.timer = clock.setTimer(PASS_LOCK_MS / 3, () => {
        lock.renewing = store.tasks
          .tryLeaderLease(LEADER_LEASE, this.holder, clock.now(), PASS_LOCK_MS)
          .catch((err: unknown) => this.log.warn({ error: err instanceof Error ? err.message : String(err) }, 'could not renew the reconcile lock'))
          .finally(() => {
            if (lock.held) renew();
          });
      });
    };
    renew();
    try {
      return await this.compareAndRepair(t0);
    } finally {
      lock.held = false;
      lock.timer?.cancel();
      // A renewal still on its way would take the lock back after the drop below.
      await lock.renewing;
      await store.tasks.dropLeaderLease(LEADER_LEASE, this.holder).catch((err: unknown) => this.log.warn({ err }, 'could not release the reconcile lock'));
    }
  }

  private async compareAndRepair(t0: number): Promise<ReconcileResult> {
    const { store, driver, clock, engine } = this.options;
    // Ironic first, then the store: a hand-over that starts in between is seen as under way, never as drift.
    const nodes = await driver.listNodes();
    if (this.failures > 0) {
      const due = await store.tasks.retryNow(clock.now());
      this.log.info({ tasks: due }, 'the driver answers again: backed-off lease tasks are due now');
      engine?.wake();
    }
    const holdings = await store.tasks.holdings();
    const failures = await this.actOnFailures(nodes, holdings);
    const repairs = planRepairs(nodes.map(observe), holdings, clock.now(), this.graceMs);
    let applied = 0;
    for (const repair of repairs) {
      try {
        if (await this.apply(repair)) {
          applied++;
          this.options.metrics?.reconcileRepairs(repair.kind, 1);
        }
      } catch (err) {
        this.log.warn({ err, repair: describe(repair) }, 'repair failed; retried next pass');
      }
    }
    const teardown = this.options.networks;
    const networks = teardown ? await reconcileNetworks({ store, driver, teardown, logger: this.log }, nodes, holdings, clock.now()) : NO_NETWORK_REPAIRS;
    this.options.metrics?.reconcileRepairs('attachment_finished', networks.finished);
    this.options.metrics?.reconcileRepairs('vif_removed', networks.removed);
    const ms = Date.now() - t0;
    const fixed = applied + networks.finished + networks.removed;
    this.log[fixed > 0 || failures > 0 ? 'info' : 'debug']({ nodes: nodes.length, repairs: repairs.length, applied, failures, networks, ms }, 'reconciled');
    return { skipped: null, nodes: nodes.length, repairs, applied, failures, networks, ms };
  }

  /**
   * Hands every node that failed for its lease since the last pass (maintenance, a broken provision state, a
   * quarantine, gone from Ironic) — or serves again — to the leasing side, one at a time; a failure of one does not
   * stop the others (it is found again next pass). Returns how many were handed over.
   */
  private async actOnFailures(nodes: readonly DriverNode[], holdings: readonly Holding[], opts: { readonly failuresOnly?: boolean } = {}): Promise<number> {
    const handler = this.options.onNodeFailure;
    if (!handler) return 0;
    const byId = new Map(nodes.map((n) => [n.uuid, n]));
    let acted = 0;
    for (const finding of failureFindings(holdings, (id) => byId.get(id) ?? null, this.options.clock.now())) {
      if (opts.failuresOnly && finding.failure === null) continue;
      try {
        await handler(finding);
        acted++;
        // Handed to the leasing side (a substitute, a degraded lease): counted with the repairs.
        this.options.metrics?.reconcileRepairs(finding.failure === null ? 'node_recovered' : 'node_failed', 1);
      } catch (err) {
        this.log.warn({ err, node_id: finding.node_id, lease_id: finding.lease_id }, 'could not act on a failed node; retried next pass');
      }
    }
    return acted;
  }

  /** Carries one repair out; false when a re-check shows it is no longer needed. */
  private async apply(repair: Repair): Promise<boolean> {
    switch (repair.kind) {
      case RepairKind.ClearLessee:
        return this.clearLessee(repair);
      case RepairKind.RestoreLessee:
        return this.restoreLessee(repair);
      case RepairKind.NodeVanished:
        return this.nodeVanished(repair.node_id, repair.holding);
      case RepairKind.MaintenanceStarted:
        await this.record(repair.holding, { node_maintenance_at: this.options.clock.now() }, {
          type: 'reconcile.node_maintenance',
          outcome: 'error',
          message: `node ${repair.node_id} went into maintenance in Ironic (${repair.reason ?? 'no reason given'}) during this lease`,
          details: { maintenance_reason: repair.reason },
        });
        return true;
      case RepairKind.MaintenanceEnded:
        await this.record(repair.holding, { node_maintenance_at: null }, {
          type: 'reconcile.node_maintenance_cleared',
          message: `node ${repair.node_id} is out of maintenance again`,
        });
        return true;
    }
  }

  private async clearLessee(repair: Extract<Repair, { kind: 'clear_lessee' }>): Promise<boolean> {
    const node = await this.current(repair.node_id);
    if (!node || !unchanged(node, repair)) return false;
    const { driver, inventory, store, clock } = this.options;
    await inventory.recordNode(await clearLeaseMark(driver, node));
    const found = repair.found_lessee ?? 'none';
    const event: NewAuditEvent = {
      type: 'reconcile.lessee_cleared',
      actor: 'engine',
      message:
        repair.reason === 'no_lease'
          ? `lessee ${found} was set in Ironic on node ${repair.node_id}, which no lease holds: cleared`
          : `lessee ${found} was left on node ${repair.node_id} after lease ${repair.found_lease_mark} ended: cleared`,
      details: { found_lessee: repair.found_lessee, found_lease_mark: repair.found_lease_mark, reason: repair.reason },
    };
    if (repair.holding) await store.tasks.updateAllocation(repair.holding.allocation_id, {}, clock.now(), [event]);
    else await store.tasks.recordNodeEvents(repair.node_id, [event], clock.now());
    this.log.warn({ node_id: repair.node_id, found_lessee: repair.found_lessee, reason: repair.reason }, 'drift repaired: lessee cleared');
    return true;
  }

  private async restoreLessee(repair: Extract<Repair, { kind: 'restore_lessee' }>): Promise<boolean> {
    const node = await this.current(repair.node_id);
    if (!node || !unchanged(node, repair)) return false;
    const { holding } = repair;
    await this.options.inventory.recordNode(await setLeaseMark(this.options.driver, node, { id: holding.lease_id, project_id: holding.project_id }));
    await this.record(holding, {}, {
      type: 'reconcile.lessee_restored',
      message: `lessee of node ${repair.node_id} was changed in Ironic to ${repair.found_lessee ?? 'none'} during the lease: set back to project ${holding.project_id}`,
      details: { found_lessee: repair.found_lessee, found_lease_mark: repair.found_lease_mark, lessee: holding.project_id },
    });
    this.log.warn({ node_id: repair.node_id, found_lessee: repair.found_lessee, lease_id: holding.lease_id }, 'drift repaired: lessee restored');
    return true;
  }

  private async nodeVanished(nodeId: string, holding: Holding): Promise<boolean> {
    if (await this.current(nodeId)) return false; // only missing from the list (it was being renamed, say)
    const error = `node ${nodeId} no longer exists in Ironic`;
    await this.options.store.tasks.updateAllocation(holding.allocation_id, { state: AllocationState.Cancelled, last_error: error }, this.options.clock.now(), [
      {
        type: 'reconcile.node_vanished',
        actor: 'engine',
        outcome: 'error',
        message: `${error}: it is dropped from this lease`,
        details: { allocation_id: holding.allocation_id, allocation_state: holding.state },
      },
    ]);
    this.log.warn({ node_id: nodeId, lease_id: holding.lease_id }, 'drift repaired: allocation of a vanished node dropped');
    return true;
  }

  private async record(holding: Holding, patch: { node_maintenance_at?: Date | null }, event: Omit<NewAuditEvent, 'actor'>): Promise<void> {
    await this.options.store.tasks.updateAllocation(holding.allocation_id, patch, this.options.clock.now(), [{ actor: 'engine', ...event }]);
  }

  private async current(nodeId: string): Promise<DriverNode | null> {
    try {
      return await this.options.driver.getNode(nodeId);
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
  }
}

function observe(node: DriverNode): ObservedNode {
  return {
    id: node.uuid,
    lessee: node.lessee,
    lease_mark: leaseMarkOf(node),
    maintenance: node.maintenance,
    maintenance_reason: node.maintenance_reason,
  };
}

/** Whether the node still shows what the repair was planned on. */
function unchanged(node: DriverNode, repair: { readonly found_lessee: string | null; readonly found_lease_mark: string | null }): boolean {
  const seen = observe(node);
  return seen.lessee === repair.found_lessee && seen.lease_mark === repair.found_lease_mark;
}

function describe(repair: Repair): Record<string, unknown> {
  return { kind: repair.kind, node_id: repair.node_id, ...('holding' in repair && repair.holding ? { lease_id: repair.holding.lease_id } : {}) };
}
