import { systemClock, type Clock } from '../src/domain/clock.js';
import type { SimulatedDriver } from '../src/drivers/simulated/simulated-driver.js';
import { createLogger, type Logger } from '../src/logger.js';
import type { Store } from '../src/store/store.js';
import type { Reply } from '../test/support/http.js';
import { bootstrapTestAdmin, CLEANING_GAP_MS, createProjectUser, startApp, type TestApp } from '../test/support/test-app.js';

export { CLEANING_GAP_MS };
export type { Reply };

/**
 * The whole HTTP API in-process, wired as the server wires it, by the tests' own harness (test/support/test-app.ts)
 * over a store the benchmark filled and its simulated hardware, on the system clock: validation, auth, planning,
 * the store's transaction and serialization all run; only the socket is left out (`app.request`).
 */
export type BenchApp = TestApp<Clock>;

export const silentLogger: Logger = createLogger('silent');

export function buildApp(store: Store, driver: SimulatedDriver, clock: Clock = systemClock): Promise<BenchApp> {
  return startApp({ store, clock, nodes: [], driver: () => driver });
}

/** Creates the operator and its token (what the server does on first start). */
export function bootstrapAdmin(store: Store, clock: Clock = systemClock): Promise<void> {
  return bootstrapTestAdmin(store, clock);
}

/** Creates (or reuses) a project, a member user in it and a token, through the API. */
export function projectMember(app: BenchApp, projectName: string, userName = `${projectName}-member`): Promise<{ projectId: string; token: string }> {
  return createProjectUser(app, projectName, 'member', userName);
}

export function expectStatus(reply: Reply, statuses: readonly number[], what: string): void {
  if (!statuses.includes(reply.status)) {
    throw new Error(`${what}: expected HTTP ${statuses.join('/')}, got ${reply.status}: ${JSON.stringify(reply.body).slice(0, 500)}`);
  }
}
