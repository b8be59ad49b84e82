import { SimulatedDriver } from '../src/drivers/simulated/simulated-driver.js';
import type { SimulatedTimings } from '../src/drivers/simulated/simulated-driver.js';
import { CLEANING_GAP_MS, bootstrapAdmin, buildApp, projectMember, type BenchApp } from './bench-app.js';
import { openBenchDatabase, type BenchDatabase } from './databases.js';
import { OWNER_PROJECTS, benchInventory } from './inventory.js';
import type { EngineName, Sizes } from './options.js';
import { seedBookings, type SeedCounts } from './seed.js';
import { elapsedMs } from './stats.js';

/** Simulated hardware timings of every section (state them with the figures). */
export const FAST_TIMINGS: Partial<SimulatedTimings> = { powerMs: 5, cleanMs: 20, undeployMs: 5, manageMs: 5, consoleMs: 5, bootOutputMs: 0 };

export const LESSEE_PROJECTS = 8;

/** A seeded pool: the database, the simulated hardware, the first app, and the lessee projects' tokens. */
export interface SeededPool {
  readonly db: BenchDatabase;
  readonly driver: SimulatedDriver;
  readonly app: BenchApp;
  /** One member token per lessee project. */
  readonly lesseeTokens: readonly string[];
  readonly seed: SeedCounts;
  readonly sizes: Pick<Sizes, 'nodes' | 'leases' | 'raceNodes'>;
  readonly timings: { readonly syncMs: number; readonly bulkSqlMs: number; readonly totalMs: number };
  close(): Promise<void>;
}

/**
 * Builds the pool of sections 1 and 2: projects and tokens through the API, `sizes.nodes` nodes through the
 * simulated driver and one inventory sync, then offers, leases, allocations, tasks and events in bulk SQL.
 */
export async function seedPool(engine: EngineName, adminUrl: string, sizes: Pick<Sizes, 'nodes' | 'leases' | 'raceNodes'>): Promise<SeededPool> {
  const started = performance.now();
  const db = await openBenchDatabase(engine, adminUrl);
  const driver = new SimulatedDriver({ nodes: benchInventory(sizes.nodes, sizes.raceNodes), timings: FAST_TIMINGS });
  try {
    await bootstrapAdmin(db.store);
    const app = await buildApp(db.store, driver);
    for (const owner of OWNER_PROJECTS) await projectMember(app, owner);
    const lesseeTokens: string[] = [];
    for (let i = 0; i < LESSEE_PROJECTS; i++) lesseeTokens.push((await projectMember(app, `lessee-${i}`)).token);

    const syncStarted = performance.now();
    const synced = await app.inventory.syncAll();
    const syncMs = elapsedMs(syncStarted);
    if (synced.added !== sizes.nodes) throw new Error(`inventory sync added ${synced.added} nodes, expected ${sizes.nodes}`);

    const sqlStarted = performance.now();
    const seed = await seedBookings(db.sql, { leases: sizes.leases, now: new Date(), gapMs: CLEANING_GAP_MS });
    const bulkSqlMs = elapsedMs(sqlStarted);
    return {
      db,
      driver,
      app,
      lesseeTokens,
      seed,
      sizes,
      timings: { syncMs, bulkSqlMs, totalMs: elapsedMs(started) },
      async close() {
        await driver.close();
        await db.close();
      },
    };
  } catch (err) {
    await driver.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw err;
  }
}
