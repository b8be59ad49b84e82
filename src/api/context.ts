import { OpenAPIHono } from '@hono/zod-openapi';
import type { Clock } from '../domain/clock.js';
import type { Principal } from '../domain/identity.js';
import type { NodePolicy } from '../domain/policy-rules/node-policy.js';
import type { IronicForwarder } from '../gateway/gateway-app.js';
import type { HardwareDriver } from '../drivers/hardware-driver.js';
import type { InventorySync } from '../engine/inventory-sync.js';
import type { Logger } from '../logger.js';
import type { LeasePlanner } from '../scheduler/lease-planner.js';
import type { Store } from '../store/store.js';
import { validationError } from './error-response.js';

/** What request handlers are given: the ports, never concrete I/O. */
export interface ApiDeps {
  readonly store: Store;
  readonly driver: HardwareDriver;
  readonly inventory: InventorySync;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly planner: LeasePlanner;
  /** The gap kept free after every lease for cleaning (LEASEHOLD_CLEANING_GAP). */
  readonly cleaningGapMs: number;
  /** The in-process lease engine, if this process runs one: woken after a lease change so it re-arms its timer. */
  readonly engine?: { wake(): void };
  /** The node policy (defaults, or with the operator's LEASEHOLD_POLICY_FILE): asked by every entry point. */
  readonly policy: NodePolicy;
  /** Ironic behind the `/baremetal` gateway (the ironic driver); null or absent: the gateway answers 403. */
  readonly ironic?: IronicForwarder | null;
  /** The serial console (src/console/); unset: 10-minute tokens, URLs from the request's host, no open connections. */
  readonly console?: ConsoleSettings;
}

export interface ConsoleSettings {
  /** How long a console token can be used to open connections (LEASEHOLD_CONSOLE_TOKEN_TTL). */
  readonly tokenTtlMs: number;
  /** The server's public base URL (LEASEHOLD_PUBLIC_URL), for the consoles' ws:// or wss:// URLs. */
  readonly publicUrl: string | null;
  /** This process's open console connections: those of a revoked token are cut at once (other replicas: ≤ 1 s). */
  readonly connections?: { closeToken(id: string): number };
}

export interface AppEnv {
  Variables: {
    principal: Principal;
    requestId: string;
    log: Logger;
  };
}

/** Every router shares one validation hook, so a bad request gets the same error shape everywhere. */
export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result, _c) => {
      if (!result.success) throw validationError(result.error, result.target);
    },
  });
}
