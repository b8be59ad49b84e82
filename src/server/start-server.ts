import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Config } from '../config.js';
import { systemClock, type Clock } from '../domain/clock.js';
import { createDriver } from '../drivers/create-driver.js';
import { IronicDriver } from '../drivers/ironic/ironic-driver.js';
import type { HardwareDriver } from '../drivers/hardware-driver.js';
import { InventorySync } from '../engine/inventory-sync.js';
import { KeystoneIdentity } from '../identity/keystone-identity.js';
import { LocalIdentity } from '../identity/local-identity.js';
import type { IdentityBackend, KeystoneRoleMap } from '../domain/identity-backend.js';
import type { NodePolicy } from '../domain/policy-rules/node-policy.js';
import type { KeystoneSession } from '../keystone/keystone-session.js';
import { LeaseEngine } from '../engine/lease-engine.js';
import { Reconciler } from '../engine/reconciler.js';
import { LeaseTimekeeper } from '../engine/lease-timekeeper.js';
import type { LeaseService } from '../leasing/lease-service.js';
import { WebhookDispatcher } from '../engine/webhook-dispatcher.js';
import { createLogger, type Logger } from '../logger.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import { bootstrapAdmin } from './bootstrap-admin.js';
import { buildHttpApp } from './http-app.js';
import { PrometheusMetrics } from './prometheus-metrics.js';
import { metricsRoutes } from '../api/metrics-route.js';
import { loadKeystoneRoles, loadPolicy } from './load-policy.js';
import { openKeystone } from './open-keystone.js';
import { openNetworks } from './open-networks.js';
import type { NetworkBackend } from '../drivers/network-backend.js';
import { SimulatedNetworks } from '../drivers/simulated/simulated-networks.js';
import { SimulatedDriver } from '../drivers/simulated/simulated-driver.js';
import { NetworkTeardown } from '../engine/network-teardown.js';
import { NetworkService } from '../networking/network-service.js';
import type { LifecycleService } from '../leasing/lifecycle-service.js';

export interface RunningServer {
  readonly url: string;
  readonly store: Store;
  readonly driver: HardwareDriver;
  readonly inventory: InventorySync;
  /** The lease engine, when this process runs one (role worker or all). */
  readonly engine?: LeaseEngine;
  /** The reconciler, when this process runs the engine (one replica reconciles at a time). */
  readonly reconciler?: Reconciler;
  /** `http://host:port` of the separate metrics listener (LEASEHOLD_METRICS_PORT), or null: `/metrics` is on `url`. */
  readonly metricsUrl: string | null;
  /** Stops accepting requests, lets running ones finish, stops timers, closes the driver and the store. */
  close(): Promise<void>;
}

export interface StartOptions {
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Use this driver instead of the configured one (tests). */
  readonly driver?: HardwareDriver;
  /** Use this network backend instead of the configured one (tests). */
  readonly networks?: NetworkBackend;
  /** Where human-facing lines (URL, first admin token) go; default: stdout on a terminal, else a log record. */
  readonly print?: (line: string) => void;
  /**
   * The configured store, already being opened (`leasehold serve` starts it before loading this module); closed
   * here if the start fails. Default: opened here, after the policy and Keystone checks.
   */
  readonly store?: Promise<Store>;
}

/** Opens the store, bootstraps the admin, syncs the inventory and listens. */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(config.logLevel);
  // Off a terminal stdout is a log (journald, a container's, a pipe): JSON lines only, so a human line is a record.
  // It is shown whatever LEASEHOLD_LOG_LEVEL says (the URL matters at `warn` too), unless logs are off.
  const banner = logger.child({ component: 'server' }, { level: logger.level === 'silent' ? 'silent' : 'info' });
  const print = options.print ?? ((line: string) => (process.stdout.isTTY ? process.stdout.write(`${line}\n`) : banner.info(line)));

  let policy: NodePolicy;
  let keystoneRoles: KeystoneRoleMap;
  let keystone: KeystoneSession | null;
  // One registry for the process, made first: Keystone's, Ironic's, the engine's and the API's reports all go to it.
  const metrics = new PrometheusMetrics({ processMetrics: true });
  try {
    // Before anything else is opened: a policy file with a mistake stops the start with the mistake in the message.
    policy = await loadPolicy(config.policyFile);
    keystoneRoles = await loadKeystoneRoles(config.policyFile);
    // Keystone answers and takes Leasehold's credentials, or the start says which not.
    keystone = config.keystone ? await openKeystone(config.keystone, clock, logger, metrics) : null;
  } catch (err) {
    await options.store?.then((s) => s.close()).catch(() => undefined);
    throw err;
  }
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const store = await (options.store ?? openStore({ databaseUrl: config.databaseUrl ?? undefined, dataDir: config.dataDir, logger }));
  const closers: Array<() => Promise<void>> = [() => store.close()];
  const closeAll = async () => {
    for (const close of closers.reverse()) await close().catch((err) => logger.warn({ err }, 'shutdown step failed'));
  };
  try {
    // Under Keystone the operators are Keystone's admins: no local admin or token is made.
    if (config.identity === 'local') await bootstrapAdmin({ store, clock, logger, dataDir: config.dataDir, adminToken: config.adminToken, print });
    const ironicUrl =
      config.ironic && config.ironic.url === null && keystone && config.keystone
        ? (await keystone.endpoint('baremetal', config.keystone.interface, config.keystone.region)).replace(/\/+$/, '')
        : undefined;
    const opened = options.networks ? { backend: options.networks } : await openNetworks(config, { keystone, clock, logger });
    const networks = opened.backend;
    if (networks) closers.push(() => networks.close());
    const driver =
      options.driver ??
      createDriver(config, { clock, logger, ironicUrl, keystoneTokens: keystone ?? undefined, networks: networks instanceof SimulatedNetworks ? networks : undefined, metrics });
    closers.push(() => driver.close());
    // The configured simulated hardware lives in the store: a restart finds its machines as it left them, and
    // replicas on one database drive the same ones (a driver handed in by a test stays its own).
    if (!options.driver && driver instanceof SimulatedDriver) await driver.share(store.simulatedHardware, logger);
    const teardown = networks ? new NetworkTeardown({ store, driver, networks, clock, logger }) : null;
    const inventory = new InventorySync({ driver, store, clock, logger, intervalMs: config.syncIntervalMs });
    await inventory.start();
    closers.push(async () => inventory.stop());

    let engine: LeaseEngine | undefined;
    let lifecycle: LifecycleService | null = null;
    let reconciler: Reconciler | undefined;
    let leasingRef: LeaseService | null = null;
    if (config.role !== 'api') {
      if (store.engine === 'pglite') {
        // The embedded store is this process's alone (data-dir lock): claims left by a crash are ours to drop.
        const released = await store.tasks.releaseAllClaims();
        if (released > 0) logger.warn({ tasks: released }, 'resuming lease tasks interrupted by a crash');
      }
      engine = new LeaseEngine({ store, driver, clock, logger, inventory, networks: teardown, metrics, markConcurrency: config.markConcurrency });
      engine.start();
      closers.push(() => engine!.stop());
      // Right after the engine: Ironic is repaired at start (a crash may have left a lessee behind).
      reconciler = new Reconciler({
        store,
        driver,
        clock,
        logger,
        inventory,
        engine,
        intervalMs: config.reconcileIntervalMs,
        failureWatchMs: config.failureWatchMs,
        networks: teardown,
        metrics,
        // The leasing side is wired below, before the server listens; a pass before that acts on nothing (the
        // next one finds the failure again).
        onNodeFailure: async (finding) => lifecycle?.onFinding(finding),
      });
      reconciler.start();
      closers.push(() => reconciler!.stop());
      const webhooks = new WebhookDispatcher(
        { store, clock, logger },
        { url: config.webhookUrl, secret: config.webhookSecret },
      );
      webhooks.start();
      closers.push(() => webhooks.stop());
      // Notices before a lease's end and auto-renew; renewals wait for the leasing side, wired below.
      const timekeeper = new LeaseTimekeeper({ store, clock, logger, renewer: () => leasingRef, noticeOffsetsMs: config.noticeOffsetsMs });
      timekeeper.start();
      closers.push(() => timekeeper.stop());
    }
    const identity: IdentityBackend =
      config.identity === 'keystone' && keystone && config.keystone
        ? new KeystoneIdentity(
            { session: keystone, store, clock, logger },
            { cacheTtlMs: config.keystone.cacheTtlMs, adminProject: config.keystone.adminProject, roles: keystoneRoles },
          )
        : new LocalIdentity(store, clock);
    // Before the API: its /metrics answer names the metrics port actually bound (LEASEHOLD_METRICS_PORT=0 picks one).
    let metricsUrl: string | null = null;
    let metricsPort: number | null = null;
    if (config.metrics.port !== null) {
      // Only /metrics here (everything else 404), so this port can be opened to Prometheus and nothing more.
      const metricsApp = metricsRoutes({ endpoint: metrics, token: config.metrics.token, separatePort: config.metrics.port }, 'metrics');
      const metricsServer = await listen(metricsApp.fetch, config.metrics.port, config.metrics.host);
      closers.push(() => closeServer(metricsServer));
      metricsPort = (metricsServer.address() as AddressInfo).port;
      metricsUrl = `http://${urlHost(config.metrics.host)}:${metricsPort}`;
      logger.info({ url: `${metricsUrl}/metrics`, token: config.metrics.token !== null }, 'serving metrics');
    }
    const { app, leasing, lifecycle: wired, consoles } = buildHttpApp({
      store,
      identity,
      keystone: config.identity === 'keystone' ? (keystone?.client ?? null) : null,
      driver,
      inventory,
      clock,
      logger,
      policy,
      cleaningGapMs: config.cleaningGapMs,
      noticeOffsetsMs: config.noticeOffsetsMs,
      ironic: driver instanceof IronicDriver ? driver : null,
      networks: networks && teardown ? new NetworkService({ store, driver, networks, teardown, clock, logger }) : null,
      networksOff: 'why' in opened ? opened.why : undefined,
      console: { tokenTtlMs: config.consoleTokenTtlMs, publicUrl: config.publicUrl },
      metrics,
      metricsAccess: { token: config.metrics.token, separatePort: metricsPort },
    });
    leasing.attachEngine(engine ?? null);
    leasingRef = leasing;
    lifecycle = wired;
    const server = await listen(app.fetch, config.port, config.host);
    closers.push(() => closeServer(server));
    // WebSocket upgrades (the serial console) on the same server and port; closed before the server (closers run
    // in reverse), so open consoles end with 1001 and their ends are recorded while the store is still open.
    consoles.attach(server);
    closers.push(() => consoles.close());
    const { port } = server.address() as AddressInfo;
    const url = `http://${urlHost(config.host)}:${port}`;
    logger.info({ url, store: store.engine, driver: driver.kind, role: config.role }, 'listening');
    print(`Leasehold listening on ${url} (store: ${store.engine}, driver: ${driver.kind}, role: ${config.role})`);
    return { url, metricsUrl, store, driver, inventory, engine, reconciler, close: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

function listen(fetch: (req: Request) => Response | Promise<Response>, port: number, hostname: string): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, port, hostname }, () => resolve(server));
    server.once('error', reject);
  });
}

function closeServer(server: ServerType): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // Keep-alive connections would hold close() open; idle ones can go now, busy ones finish their request.
    if ('closeIdleConnections' in server) server.closeIdleConnections();
  });
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}
