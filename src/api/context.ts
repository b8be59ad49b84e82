import { OpenAPIHono } from '@hono/zod-openapi';
import type { Clock } from '../domain/clock.js';
import type { Principal } from '../domain/identity.js';
import type { NodePolicy } from '../domain/policy-rules/node-policy.js';
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
