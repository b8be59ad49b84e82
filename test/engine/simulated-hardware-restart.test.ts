import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { DriverNode } from '../../src/drivers/hardware-driver.js';
import { SimulatedDriver } from '../../src/drivers/simulated/simulated-driver.js';
import { createLogger } from '../../src/logger.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { POSTGRES_SKIP_REASON, TEST_DATABASE_URL, testDatabases } from '../support/postgres.js';

/**
 * `leasehold serve` on the simulated driver, in this process and on the real clock, restarted on the same data:
 * the demo's hardware is where it was, so the reconciler finds nothing to repair; and replicas on one PostgreSQL
 * act on one hardware. Timings are short except the cleaning, which spans the restart.
 */
const TIMINGS = { powerMs: 20, bootDeviceMs: 0, cleanMs: 2_500, deployMs: 20, undeployMs: 20, manageMs: 20, consoleMs: 20, bootOutputMs: 0 };
const ADMIN = 'lh_simulated-restart-admin-token-0123456789ab';
const running: RunningServer[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const server of running.splice(0)) await server.close();
});
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function serve(env: Record<string, string>): Promise<RunningServer> {
  const config = loadConfig({
    LEASEHOLD_PORT: '0',
    LEASEHOLD_ADMIN_TOKEN: ADMIN,
    LEASEHOLD_CLEANING_GAP: '0s',
    LEASEHOLD_SIMULATED_TIMINGS: JSON.stringify(TIMINGS),
    ...env,
  });
  const server = await startServer(config, { logger: createLogger('silent'), print: () => undefined });
  running.push(server);
  return server;
}

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'leasehold-simstate-'));
  dirs.push(dir);
  return dir;
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The reconciler's repairs as /metrics counts them, all kinds together. */
async function repairsCounted(server: RunningServer): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('leasehold_reconcile_repairs_total'))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

/** A one-hour lease of `nodeId` for a new project, started by the engine: the node carries the lessee mark. */
async function leaseNode(server: RunningServer, nodeId: string): Promise<{ readonly projectId: string; readonly leaseId: string }> {
  const now = new Date();
  const project = await server.store.createProject({ name: 'restart-lab' }, now);
  const lease = await server.store.leasing.createLease(
    {
      name: 'across-a-restart',
      project_id: project.id,
      created_by: null,
      start: now,
      end: new Date(now.getTime() + 3_600_000),
      request: { nodes: [nodeId] },
      allocations: [{ node_id: nodeId, group_index: 0 }],
      cleaning_gap_ms: 0,
      max_nodes: null,
    },
    [],
    now,
  );
  server.engine!.wake();
  await until('the lessee mark', async () => (await server.driver.getNode(nodeId)).lessee === project.id);
  return { projectId: project.id, leaseId: lease.id };
}

const pick = (node: DriverNode) => ({
  power_state: node.power_state,
  provision_state: node.provision_state,
  lessee: node.lessee,
  owner: node.owner,
  extra: node.extra,
  maintenance: node.maintenance,
  maintenance_reason: node.maintenance_reason,
});

describe('the demo across a restart (PGlite data directory)', () => {
  it('keeps every node’s state and work in progress, and the reconciler repairs no drift', async () => {
    const dir = await dataDir();
    const first = await serve({ LEASEHOLD_DATA_DIR: dir });
    const [leased, maintained, cleaned] = await first.driver.listNodes();
    const sim = first.driver as SimulatedDriver;
    const { projectId } = await leaseNode(first, leased!.uuid);
    await sim.setPowerState(leased!.uuid, 'power on');
    await until('power on', async () => (await sim.getNode(leased!.uuid)).power_state === 'power on');
    await sim.setMaintenance(maintained!.uuid, true, 'replacing a fan');
    await sim.setProvisionState(cleaned!.uuid, 'manage');
    await sim.setProvisionState(cleaned!.uuid, 'provide');
    const before = (await sim.listNodes()).map(pick);
    expect(before[0]).toMatchObject({ lessee: projectId, power_state: 'power on' });
    await first.close();
    running.splice(0);

    const second = await serve({ LEASEHOLD_DATA_DIR: dir });
    const after = await second.driver.listNodes();
    // The cleaning goes on meanwhile (real clock): its stage may have moved on; everything else is as it was.
    expect(after.map(pick).filter((_, i) => i !== 2)).toEqual(before.filter((_, i) => i !== 2));
    expect(after[2]).toMatchObject({ provision_state: expect.stringMatching(/^(cleaning|clean wait)$/), target_provision_state: 'available' });

    // The pass the start ran (or a later one): nothing to repair, no reconcile.* event, nothing counted.
    const pass = await second.reconciler!.reconcile();
    expect(pass.skipped).toBeNull();
    expect(pass.repairs).toEqual([]);
    expect(await repairsCounted(second)).toBe(0);
    const events = await second.store.leasing.listEvents({}, { limit: 200 });
    expect(events.items.filter((e) => e.type.startsWith('reconcile.'))).toEqual([]);

    // The cleaning begun before the restart is finished by the restarted server from the stored stage and its due
    // instant (taken over 2 s after it was due: the process that started it is gone).
    await until('the cleaning to end', async () => (await second.driver.getNode(cleaned!.uuid)).provision_state === 'available', 10_000);
  }, 60_000);
});

describe.skipIf(!TEST_DATABASE_URL)('two replicas on one PostgreSQL', () => {
  const databases = testDatabases(TEST_DATABASE_URL ?? undefined, 'leasehold_simstate');
  afterAll(() => databases.dropAll());

  it('share one simulated hardware: a power change through one is seen by the other, and the lessee mark is one', async () => {
    const { url } = await databases.create();
    const a = await serve({ DATABASE_URL: url, LEASEHOLD_DATA_DIR: await dataDir() });
    const b = await serve({ DATABASE_URL: url, LEASEHOLD_DATA_DIR: await dataDir() });
    const [node] = await a.driver.listNodes();
    const id = node!.uuid;
    const { projectId } = await leaseNode(a, id);
    expect((await b.driver.getNode(id)).lessee).toBe(projectId);
    await b.driver.setPowerState(id, 'power on');
    await until('power on seen by the other replica', async () => (await a.driver.getNode(id)).power_state === 'power on');
    expect((await a.driver.listNodes()).map(pick)).toEqual((await b.driver.listNodes()).map(pick));
    for (const server of [a, b]) {
      const pass = await server.reconciler!.reconcile();
      if (!pass.skipped) expect(pass.repairs).toEqual([]);
      expect(await repairsCounted(server)).toBe(0);
    }
  }, 60_000);
});

if (!TEST_DATABASE_URL) console.warn(POSTGRES_SKIP_REASON);
