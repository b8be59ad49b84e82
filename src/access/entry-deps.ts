import type { Clock } from '../domain/clock.js';
import type { IdentityBackend } from '../domain/identity-backend.js';
import type { Metrics, MetricsEndpoint } from '../domain/metrics.js';
import type { NodePolicy } from '../domain/policy-rules/node-policy.js';
import type { HardwareDriver } from '../drivers/hardware-driver.js';
import type { LeaseService } from '../leasing/lease-service.js';
import type { LifecycleService } from '../leasing/lifecycle-service.js';
import type { Logger } from '../logger.js';
import type { NetworkService } from '../networking/network-service.js';
import type { Store } from '../store/store.js';
import type { InventoryPort } from './inventory-port.js';
import type { IronicForwarder } from './ironic-forwarder.js';
import type { KeystoneSignIn } from './keystone-sign-in.js';

/**
 * What every entry point — the REST API (src/api/), the Ironic-compatible gateway (src/gateway/) and the serial
 * console (src/console/) — is given: the ports, never a concrete class of the engine or a driver's internals.
 * server/start-server.ts builds it once per process.
 */
export interface EntryDeps {
  readonly store: Store;
  /** Who vouches for callers' tokens: Leasehold's own users, or Keystone (LEASEHOLD_IDENTITY). */
  readonly identity: IdentityBackend;
  readonly driver: HardwareDriver;
  readonly inventory: InventoryPort;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Quotes, leases, extensions and ends: plan, book, wake the engine (src/leasing/). */
  readonly leasing: LeaseService;
  /** Nodes replaced, returned early, reclaimed by their owner (src/leasing/lifecycle-service.ts). */
  readonly lifecycle: LifecycleService;
  /** The node policy (defaults, or with the operator's LEASEHOLD_POLICY_FILE): asked by every entry point. */
  readonly policy: NodePolicy;
  /** Ironic behind the `/baremetal` gateway (the ironic driver); null or absent: the gateway answers 403. */
  readonly ironic?: IronicForwarder | null;
  /** The serial console; unset: 10-minute tokens, URLs from the request's host, no open connections. */
  readonly console?: ConsoleSettings;
  /** Keystone, for the web UI's sign-in with a password or an application credential (LEASEHOLD_IDENTITY=keystone). */
  readonly keystone?: KeystoneSignIn | null;
  /** Tenant networks on nodes (Neutron, or the demo's simulated networks); null: the network endpoints answer 409. */
  readonly networks?: NetworkService | null;
  /** Why there are no tenant networks here, in words that say what to configure. */
  readonly networksOff?: string;
  /** Where requests are counted (by route template); unset: nowhere. */
  readonly metrics?: Metrics;
  /** `/metrics` and its rule (LEASEHOLD_METRICS_*); unset: the API has no `/metrics`. */
  readonly metricsAccess?: MetricsAccess;
}

export interface MetricsAccess {
  readonly endpoint: MetricsEndpoint;
  /** LEASEHOLD_METRICS_TOKEN: a scrape sends it as `Authorization: Bearer`; null: open to whoever reaches the port. */
  readonly token: string | null;
  /** The port a separate metrics listener uses (LEASEHOLD_METRICS_PORT); null: the API port serves `/metrics`. */
  readonly separatePort: number | null;
}

export interface ConsoleSettings {
  /** How long a console token can be used to open connections (LEASEHOLD_CONSOLE_TOKEN_TTL). */
  readonly tokenTtlMs: number;
  /** The server's public base URL (LEASEHOLD_PUBLIC_URL), for the consoles' ws:// or wss:// URLs. */
  readonly publicUrl: string | null;
  /** This process's open console connections: those of a revoked token are cut at once (other replicas: ≤ 1 s). */
  readonly connections?: { closeToken(id: string): number };
}
