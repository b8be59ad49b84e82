import { createApp } from '../api/app.js';
import { NodePolicy } from '../domain/policy-rules/node-policy.js';
import { systemClock, type Clock } from '../domain/clock.js';
import { fromValue } from '../domain/tokens.js';
import type { SimulatedDriver } from '../drivers/simulated/simulated-driver.js';
import { InventorySync } from '../engine/inventory-sync.js';
import { createLogger, type Logger } from '../logger.js';
import { LeasePlanner } from '../scheduler/lease-planner.js';
import type { Store } from '../store/store.js';

/** The gap the product keeps after every lease by default (LEASEHOLD_CLEANING_GAP=10m). */
export const CLEANING_GAP_MS = 10 * 60_000;
export const ADMIN_TOKEN = 'lh_bench-admin-token-0123456789abcdef';

export interface Reply {
  readonly status: number;
  readonly body: any;
}

/**
 * The whole HTTP API in-process, wired like the server (and test/support/test-app.ts): validation, auth,
 * planning, the store's transaction and serialization all run; only the socket is left out (`app.request`).
 */
export interface BenchApp {
  readonly store: Store;
  readonly inventory: InventorySync;
  readonly clock: Clock;
  request(method: string, path: string, options?: { token?: string; body?: unknown }): Promise<Reply>;
  /** Lets the API wake a lease engine after lease changes, as the server does. */
  attachEngine(engine: { wake(): void }): void;
}

export const silentLogger: Logger = createLogger('silent');

export function buildApp(store: Store, driver: SimulatedDriver, clock: Clock = systemClock): BenchApp {
  const logger = silentLogger;
  const inventory = new InventorySync({ driver, store, clock, logger, intervalMs: 3_600_000 });
  const planner = new LeasePlanner(store, clock, { cleaningGapMs: CLEANING_GAP_MS });
  const deps = { store, driver, inventory, clock, logger, planner, cleaningGapMs: CLEANING_GAP_MS, engine: undefined as { wake(): void } | undefined, policy: NodePolicy.defaults() };
  const app = createApp(deps);
  return {
    store,
    inventory,
    clock,
    attachEngine(engine) {
      deps.engine = engine;
    },
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { authorization: `Bearer ${options.token ?? ADMIN_TOKEN}` };
      let body: string | undefined;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['content-type'] = 'application/json';
      }
      const res = await app.request(path, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        /* not JSON */
      }
      return { status: res.status, body: parsed };
    },
  };
}

/** Creates the operator and its token (what the server does on first start). */
export async function bootstrapAdmin(store: Store, clock: Clock = systemClock): Promise<void> {
  const admin = fromValue(ADMIN_TOKEN);
  await store.bootstrapAdmin({ userName: 'admin', token: { token_hash: admin.hash, prefix: admin.prefix } }, clock.now());
}

/** Creates (or reuses) a project, a member user in it and a token, through the API; returns the token value. */
export async function projectMember(app: BenchApp, projectName: string, userName = `${projectName}-member`): Promise<{ projectId: string; token: string }> {
  let project = await app.request('GET', `/v1/projects/${projectName}`);
  if (project.status === 404) project = await app.request('POST', '/v1/projects', { body: { name: projectName } });
  expectStatus(project, [200, 201], `project ${projectName}`);
  const user = await app.request('POST', '/v1/users', { body: { name: userName, project_id: project.body.id, role: 'member' } });
  expectStatus(user, [201], `user ${userName}`);
  const token = await app.request('POST', '/v1/tokens', { body: { user_id: user.body.id } });
  expectStatus(token, [201], `token for ${userName}`);
  return { projectId: project.body.id, token: token.body.token };
}

export function expectStatus(reply: Reply, statuses: readonly number[], what: string): void {
  if (!statuses.includes(reply.status)) {
    throw new Error(`${what}: expected HTTP ${statuses.join('/')}, got ${reply.status}: ${JSON.stringify(reply.body).slice(0, 500)}`);
  }
}
