import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliJson } from '../support/processes.js';
import { startLeaseholdServer, type LeaseholdServer } from '../support/server.js';
import { PROMPTLY_MS } from '../support/timing.js';

const n = (i: number, name: string, memory_gib: number, gpus: number, local_gb: number) => ({
  uuid: `5eed1000-0000-4000-8000-00000000000${i}`,
  name,
  owner: i <= 3 ? 'physics-lab' : 'bio-lab',
  properties: { memory_mb: memory_gib * 1024, cpus: 32, local_gb, cpu_arch: 'x86_64', gpus },
  driver_info: { ipmi_password: 'seed-bmc-secret' },
});
const NODES = [n(1, 'gpu-1', 64, 1, 480), n(2, 'gpu-2', 128, 2, 960), n(3, 'gpu-big', 1024, 8, 3840), n(4, 'gpu-3', 96, 1, 480), n(5, 'disk-1', 16, 0, 4000), n(6, 'disk-big', 1024, 0, 2000)];
const TIMINGS = { powerMs: 50, cleanMs: 300, deployMs: 100, undeployMs: 50, manageMs: 50, consoleMs: 20, bootOutputMs: 50 };

/** The acceptance story from DESIGN.md, through the real server process and the real CLI. */
describe('the seed workflow end to end on the simulated driver', () => {
  let lh: LeaseholdServer;
  const as: Record<string, Record<string, string>> = {};

  beforeAll(async () => {
    lh = await startLeaseholdServer({ LEASEHOLD_SIMULATED_NODES: JSON.stringify(NODES), LEASEHOLD_SIMULATED_TIMINGS: JSON.stringify(TIMINGS) });
    as.admin = lh.admin.cliEnv;
    for (const [project, user] of [['physics-lab', 'pat'], ['bio-lab', 'bo'], ['astro', 'ada'], ['geo', 'gil']] as const) {
      await cliJson(['project', 'create', project], as.admin!);
      const u = await cliJson(['user', 'create', user, '--project', project, '--role', 'member'], as.admin!);
      as[user] = lh.api((await cliJson(['token', 'create', '--user', u.id], as.admin!)).token).cliEnv;
    }
  }, 120_000);
  afterAll(async () => {
    await lh?.stop();
  });

  it('runs: offers with a 5-day maximum, a 3 + 1 best-fit lease, power, the end, cleaning, back to the pool', async () => {
    // 1. Owners put their nodes in the pool with a maximum lease of 5 days.
    for (const node of NODES) await cliJson(['offer', 'create', node.name, '--max-lease', '5d'], node.owner === 'physics-lab' ? as.pat! : as.bo!);

    // 2.-3. A 6-day request is refused with its reason; the 3-day one gets the best fits, all or nothing.
    const need = ['--need', '3:memory >= 48GiB and gpus >= 1', '--need', '1:memory >= 16GiB and disk >= 1TB'];
    const tooLong = await cli(['lease', 'create', ...need, '--for', '6d'], as.ada!);
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toContain('offer allows at most P5D');

    const lease = await cliJson(['lease', 'create', '--name', 'seed', ...need, '--for', '3d', '--wait', '--wait-timeout', '30s'], as.ada!);
    expect(lease.state).toBe('active');
    const picked = lease.allocations.map((a: { group: number; node_name: string }) => `${a.group}:${a.node_name}`).sort();
    expect(picked).toEqual(['0:gpu-1', '0:gpu-2', '0:gpu-3', '1:disk-1']);

    // An unmet request gets 409 with the earliest start: when the seed lease ends.
    const unmet = await cli(['lease', 'quote', '--need', '2:gpus >= 1', '--for', '1d'], as.gil!);
    expect(unmet.code).toBe(1);
    expect(unmet.stderr).toContain(`earliest start: ${lease.end}`);

    // Ironic (here the simulated driver) holds the lessee on every leased node.
    const gpu1 = await cliJson(['node', 'show', 'gpu-1'], as.admin!);
    expect(gpu1.lessee).toBe(lease.project_id);

    // 4. The lessee powers its nodes; nobody else but the owner and the operator sees them.
    expect((await cli(['node', 'power', 'gpu-1', 'on'], as.ada!)).code).toBe(0);
    await until(async () => (await cliJson(['node', 'show', 'gpu-1'], as.ada!)).power_state === 'power on');
    const seen = await cliJson(['node', 'list'], as.ada!);
    expect(seen.nodes.map((x: { name: string }) => x.name)).toEqual(['disk-1', 'gpu-1', 'gpu-2', 'gpu-3']);
    expect(JSON.stringify(seen)).not.toContain('seed-bmc-secret');
    expect((await cli(['node', 'show', 'gpu-1'], as.gil!)).code).toBe(1);
    expect((await cliJson(['node', 'show', 'gpu-1'], as.pat!)).lease.id).toBe(lease.id);

    // 5. The lease ends (ended early here, rather than waiting 3 days): access is gone at once.
    const ended = await cliJson(['lease', 'cancel', lease.id], as.ada!);
    const endedAt = Date.parse(ended.end);
    const refused = await cli(['node', 'show', 'gpu-1'], as.ada!);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('not found');
    expect(Date.now() - endedAt).toBeLessThan(PROMPTLY_MS);

    // The engine clears the lessee, powers off, cleans, and the nodes come back to the pool.
    await until(async () => (await cliJson(['lease', 'show', lease.id], as.ada!)).state === 'ended', 30_000);
    for (const name of ['gpu-1', 'gpu-2', 'gpu-3', 'disk-1']) {
      const node = await cliJson(['node', 'show', name], as.admin!);
      expect(node).toMatchObject({ lessee: null, provision_state: 'available', power_state: 'power off', quarantined: false });
    }
    const released = await cliJson(['event', 'list', '--lease', lease.id, '--type', 'allocation.released'], as.ada!);
    expect(released.events).toHaveLength(4);

    // Back in the pool: the same request can be had again by someone else.
    expect((await cli(['lease', 'quote', ...need, '--for', '3d'], as.gil!)).code).toBe(0);
  }, 120_000);
});

async function until(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}
