import type { OpenAPIHono } from '@hono/zod-openapi';
import type { EntryDeps } from '../access/entry-deps.js';
import type { InventoryPort } from '../access/inventory-port.js';
import type { IronicForwarder } from '../access/ironic-forwarder.js';
import type { KeystoneSignIn } from '../access/keystone-sign-in.js';
import { createApp } from '../api/app.js';
import type { AppEnv } from '../api/context.js';
import { ConsoleProxy, type ConsoleProxyOptions } from '../console/console-proxy.js';
import type { Clock } from '../domain/clock.js';
import type { IdentityBackend } from '../domain/identity-backend.js';
import type { NodePolicy } from '../domain/policy-rules/node-policy.js';
import type { HardwareDriver } from '../drivers/hardware-driver.js';
import { LeaseService } from '../leasing/lease-service.js';
import { LifecycleService } from '../leasing/lifecycle-service.js';
import type { Logger } from '../logger.js';
import type { NetworkService } from '../networking/network-service.js';
import type { Store } from '../store/store.js';
import { PrometheusMetrics } from './prometheus-metrics.js';

export interface HttpAppParts {
  readonly store: Store;
  readonly identity: IdentityBackend;
  readonly driver: HardwareDriver;
  readonly inventory: InventoryPort;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly policy: NodePolicy;
  /** LEASEHOLD_CLEANING_GAP. */
  readonly cleaningGapMs: number;
  /** LEASEHOLD_NOTICE_OFFSETS (default 24 h and 1 h). */
  readonly noticeOffsetsMs?: readonly number[];
  /** Ironic behind `/baremetal` (the ironic driver), or null. */
  readonly ironic: IronicForwarder | null;
  /** Keystone for the web UI's sign-in (LEASEHOLD_IDENTITY=keystone), or null. */
  readonly keystone?: KeystoneSignIn | null;
  /** Tenant networks (a network backend is configured), or null. */
  readonly networks?: NetworkService | null;
  /** Why there are no tenant networks here (the network endpoints' 409 not_configured). */
  readonly networksOff?: string;
  readonly console: {
    /** LEASEHOLD_CONSOLE_TOKEN_TTL. */
    readonly tokenTtlMs: number;
    /** LEASEHOLD_PUBLIC_URL. */
    readonly publicUrl: string | null;
    /** The proxy's timings and caps (tests shorten them). */
    readonly proxy?: Partial<ConsoleProxyOptions>;
  };
  /** The process's metrics (the engine and the drivers report to it too); default: a registry of this app's own. */
  readonly metrics?: PrometheusMetrics;
  /** Who may scrape `/metrics` and where (LEASEHOLD_METRICS_TOKEN, _PORT); default: open, on the API port. */
  readonly metricsAccess?: { readonly token: string | null; readonly separatePort: number | null };
}

export interface HttpApp {
  /** The REST API, the `/baremetal` gateway, the docs and the web UI: `app.fetch` serves them. */
  readonly app: OpenAPIHono<AppEnv>;
  readonly deps: EntryDeps;
  readonly leasing: LeaseService;
  /** Nodes replaced, returned, reclaimed: also what the reconciler hands failed nodes to. */
  readonly lifecycle: LifecycleService;
  /** The serial console's WebSocket side: `consoles.attach(server)` once the server listens. */
  readonly consoles: ConsoleProxy;
  /** What `/metrics` renders; its gauges read this app's store and consoles at scrape time. */
  readonly metrics: PrometheusMetrics;
}

/**
 * The entry points of one process wired over its ports: the leasing service, the console proxy, and the HTTP app
 * that serves the REST API and mounts the gateway. The server (start-server.ts), the tests (test/support/test-app.ts)
 * and the benchmark wire through this one function, so what they exercise is what runs.
 */
export function buildHttpApp(parts: HttpAppParts): HttpApp {
  const metrics = parts.metrics ?? new PrometheusMetrics();
  const leasing = new LeaseService(parts.store, parts.clock, { cleaningGapMs: parts.cleaningGapMs, noticeOffsetsMs: parts.noticeOffsetsMs });
  const lifecycle = new LifecycleService(parts.store, leasing, parts.clock, parts.logger);
  const base: EntryDeps = {
    store: parts.store,
    identity: parts.identity,
    driver: parts.driver,
    inventory: parts.inventory,
    clock: parts.clock,
    logger: parts.logger,
    leasing,
    lifecycle,
    policy: parts.policy,
    ironic: parts.ironic,
    keystone: parts.keystone ?? null,
    networks: parts.networks ?? null,
    networksOff: parts.networksOff,
    metrics,
    metricsAccess: { endpoint: metrics, token: parts.metricsAccess?.token ?? null, separatePort: parts.metricsAccess?.separatePort ?? null },
  };
  const consoles = new ConsoleProxy(base, parts.console.proxy);
  const deps: EntryDeps = {
    ...base,
    console: { tokenTtlMs: parts.console.tokenTtlMs, publicUrl: parts.console.publicUrl, connections: consoles },
  };
  metrics.watch({ store: parts.store, consoles });
  return { app: createApp(deps), deps, leasing, lifecycle, consoles, metrics };
}
