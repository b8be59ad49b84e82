/**
 * The acceptance story (DESIGN.md, "The seed workflow") end to end: the real `leasehold serve` process with
 * LEASEHOLD_DRIVER=ironic in front of a real standalone Ironic (fake-hardware, http_basic), driven through the
 * real CLI and API, with what Ironic shows watched every 20 ms. Prints `[figures]`: how soon Ironic mirrors a
 * lease's start and end, how long a lessee's power action takes to reach Ironic, and how long cleaning and the
 * release take.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ironicAvailable, startIronic, type IronicHandle } from '../support/ironic.js';
import { Figures, summarize } from '../support/figures.js';
import { until, type Api } from '../support/http.js';
import { IronicWatch, availableAgain, nodeSpec, startLeasehold, type LeaseholdOnIronic } from '../support/ironic-leasehold.js';
import { cli, cliJson } from '../support/processes.js';
import { PROMPTLY_MS } from '../support/timing.js';

const avail = ironicAvailable();

const NODES = [
  nodeSpec('gpu-1', { memory_gib: 64, cpus: 32, local_gb: 480, gpus: 1, gpu_model: 'nvidia-a100' }, { owner: 'physics-lab', traits: ['CUSTOM_GPU_A100', 'HW_CPU_X86_AVX2'] }),
  nodeSpec('gpu-2', { memory_gib: 128, cpus: 48, local_gb: 960, gpus: 2, gpu_model: 'nvidia-a100' }, { owner: 'physics-lab', traits: ['CUSTOM_GPU_A100', 'HW_CPU_X86_AVX2'] }),
  nodeSpec('gpu-big', { memory_gib: 1024, cpus: 128, local_gb: 3840, gpus: 8, gpu_model: 'nvidia-h100-sxm' }, { owner: 'physics-lab', traits: ['CUSTOM_GPU_H100', 'HW_CPU_X86_AVX512F'] }),
  nodeSpec('gpu-3', { memory_gib: 96, cpus: 32, local_gb: 480, gpus: 1, gpu_model: 'nvidia-l40s' }, { owner: 'bio-lab', traits: ['CUSTOM_GPU_L40S'] }),
  nodeSpec('disk-1', { memory_gib: 16, cpus: 16, local_gb: 4000 }, { owner: 'bio-lab', traits: ['CUSTOM_NVME', 'CUSTOM_STORAGE'] }),
  nodeSpec('disk-big', { memory_gib: 1024, cpus: 96, local_gb: 2000, arch: 'aarch64' }, { owner: 'bio-lab', traits: ['CUSTOM_NVME'] }),
];
const LEASED = ['gpu-1', 'gpu-2', 'gpu-3', 'disk-1'];
const NEED = ['--need', '3:memory >= 48GiB and gpus >= 1', '--need', '1:memory >= 16GiB and disk >= 1TB'];

describe.skipIf(!avail.ok)('the seed workflow against a real Ironic', () => {
  let ironic: IronicHandle;
  let lh: LeaseholdOnIronic;
  let watch: IronicWatch;
  const uuid: Record<string, string> = {};
  const as: Record<string, Api> = {};
  const figures = new Figures('seed_workflow');

  beforeAll(async () => {
    ironic = await startIronic({ auth: 'http_basic' });
    const t0 = performance.now();
    const ids = await ironic.enroll(NODES);
    NODES.forEach((n, i) => (uuid[n.name] = ids[i]!));
    figures.add('ironic_start_ms', 'Ironic start (until fake-hardware is listed)', ironic.timings.startMs, 'ms');
    figures.add('enroll_6_nodes_ms', 'enrol 6 nodes to available', Math.round(performance.now() - t0), 'ms');
    lh = await startLeasehold(ironic);
    for (const [project, user] of [['physics-lab', 'pat'], ['bio-lab', 'bo'], ['astro', 'ada'], ['geo', 'gil']] as const) {
      as[user] = await lh.member(project, user);
    }
    watch = new IronicWatch(ironic, 20).start();
  });

  afterAll(async () => {
    figures.report();
    await watch?.stop();
    await lh?.stop();
    await ironic?.stop();
  });

  it("lists Ironic's nodes with their uuids, owners, properties and traits, and each owner sees its own", async () => {
    const { nodes } = await lh.admin.ok('GET', '/v1/nodes');
    expect(nodes.map((n: { name: string }) => n.name).sort()).toEqual(NODES.map((n) => n.name).sort());
    for (const spec of NODES) {
      const node = nodes.find((n: { name: string }) => n.name === spec.name);
      expect(node).toMatchObject({
        id: uuid[spec.name],
        owner: spec.owner,
        owner_project: { name: spec.owner },
        lessee: null,
        resource_class: spec.resource_class,
        properties: spec.properties,
        traits: [...spec.traits!].sort(),
        provision_state: 'available',
        power_state: 'power off',
        quarantined: false,
      });
      expect(node.facts).toMatchObject({
        memory: (spec.properties.memory_mb as number) * 2 ** 20,
        disk: (spec.properties.local_gb as number) * 2 ** 30,
        gpus: spec.properties.gpus,
        cpu_arch: spec.properties.cpu_arch,
      });
    }
    expect(JSON.stringify(nodes)).not.toContain('bmc-secret-never-shown');

    const physics = await cliJson(['node', 'list'], as.pat!.cliEnv);
    expect(physics.nodes.map((n: { id: string }) => n.id).sort()).toEqual(['gpu-1', 'gpu-2', 'gpu-big'].map((n) => uuid[n]).sort());
    const outsider = await cliJson(['node', 'list'], as.gil!.cliEnv);
    expect(outsider.nodes).toEqual([]);
  });

  it('runs: 5-day offers, a 3 + 1 best-fit lease mirrored to Ironic at once, lessee power in Ironic, the end, cleaning, back to the pool', async () => {
    // 1. Owners put their nodes in the pool with a maximum lease of 5 days.
    for (const spec of NODES) {
      await cliJson(['offer', 'create', spec.name, '--max-lease', '5d'], (spec.owner === 'physics-lab' ? as.pat! : as.bo!).cliEnv);
    }

    // 2. A 6-day request is refused with its reason.
    const tooLong = await cli(['lease', 'create', ...NEED, '--for', '6d'], as.ada!.cliEnv);
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toContain('offer allows at most P5D');

    // 3. The request gets the best fits, starting now; Ironic shows the lessee on each node at once (the speed: figures, bench).
    const lease = await cliJson(['lease', 'create', '--name', 'seed', ...NEED, '--for', '10m', '--wait', '--wait-timeout', '30s'], as.ada!.cliEnv);
    expect(lease.state).toBe('active');
    const picked = lease.allocations.map((a: { group: number; node_name: string }) => `${a.group}:${a.node_name}`).sort();
    expect(picked).toEqual(['0:gpu-1', '0:gpu-2', '0:gpu-3', '1:disk-1']);
    const start = Date.parse(lease.start);
    const leased = LEASED.map((n) => uuid[n]!);
    const visible = await watch.waitForAll(leased, (n) => n.lessee === lease.project_id, { since: start - 1_000, timeoutMs: 10_000, what: 'with the lessee' });
    const startLag = visible.map((t) => t - start);
    figures.add('lessee_visible_after_start_ms', 'lease start → lessee visible in Ironic (4 nodes, 20 ms polling)', summarize(startLag), 'ms');
    for (const lag of startLag) expect(lag).toBeLessThan(PROMPTLY_MS);
    for (const name of LEASED) {
      const node = await ironic.getNode(uuid[name]!);
      expect(node).toMatchObject({ lessee: lease.project_id, owner: NODES.find((n) => n.name === name)!.owner });
      expect((node.extra as Record<string, unknown>).leasehold_lease).toBe(lease.id);
    }
    for (const name of ['gpu-big', 'disk-big']) expect(watch.latest(uuid[name]!)!.lessee).toBeNull();

    // Nothing else fits now: the earliest start is the seed lease's end.
    const unmet = await cli(['lease', 'quote', '--need', '2:gpus >= 1', '--for', '1d'], as.gil!.cliEnv);
    expect(unmet.code).toBe(1);
    expect(unmet.stderr).toContain(`earliest start: ${lease.end}`);

    // 4. The lessee powers its nodes through Leasehold, and Ironic carries it out; nobody else sees them.
    const powerLag: number[] = [];
    const power = async (name: string, action: 'on' | 'off') => {
      const before = Date.now();
      const res = await cli(['node', 'power', name, action], as.ada!.cliEnv);
      expect(res.code, res.stderr).toBe(0);
      const seen = await watch.waitFor(uuid[name]!, (n) => n.power_state === `power ${action}` && n.target_power_state === null, {
        since: before,
        timeoutMs: 10_000,
        what: `power ${action}`,
      });
      powerLag.push(seen - before);
    };
    await power('gpu-1', 'on');
    await power('gpu-1', 'off');
    await power('gpu-2', 'on'); // left on: the end powers it off before cleaning
    figures.add('lessee_power_action_ms', 'lessee `leasehold node power` (CLI process) → Ironic power state settled', summarize(powerLag), 'ms');
    await until(async () => (await cliJson(['node', 'show', 'gpu-2'], as.ada!.cliEnv)).power_state === 'power on', 10_000, 'Leasehold shows gpu-2 on');
    const seen = await cliJson(['node', 'list'], as.ada!.cliEnv);
    expect(seen.nodes.map((x: { name: string }) => x.name).sort()).toEqual([...LEASED].sort());
    expect(JSON.stringify(seen)).not.toContain('bmc-secret-never-shown');
    expect((await cli(['node', 'show', 'gpu-1'], as.gil!.cliEnv)).code).toBe(1);
    expect((await cli(['node', 'power', 'gpu-1', 'on'], as.gil!.cliEnv)).code).toBe(1);
    expect((await cliJson(['node', 'show', 'gpu-1'], as.pat!.cliEnv)).lease.id).toBe(lease.id);

    // 5. The lease ends (early, by the lessee): access is gone at once, Ironic's lessee promptly after.
    const before = Object.fromEntries(leased.map((id) => [id, watch.latest(id)]));
    const ended = await cliJson(['lease', 'cancel', lease.id], as.ada!.cliEnv);
    const end = Date.parse(ended.end);
    const refused = await cli(['node', 'show', 'gpu-1'], as.ada!.cliEnv);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('not found');
    const powerRefused = await as.ada!.call('POST', `/v1/nodes/${uuid['gpu-1']}/power`, { action: 'on' });
    expect(powerRefused.status).toBe(404);

    const cleared = await watch.waitForAll(leased, (n) => n.lessee === null && n.extra.leasehold_lease === undefined, {
      since: end,
      timeoutMs: 10_000,
      what: 'with the lessee cleared',
    });
    const endLag = cleared.map((t) => t - end);
    figures.add('lessee_cleared_after_end_ms', 'lease end → lessee cleared in Ironic (4 nodes, 20 ms polling)', summarize(endLag), 'ms');
    for (const lag of endLag) expect(lag).toBeLessThan(PROMPTLY_MS);

    // The engine powers off, cleans through Ironic, and the nodes are available again.
    const back = await Promise.all(
      leased.map((id) => watch.waitFor(id, availableAgain(before[id]), { since: end, timeoutMs: 30_000, what: 'available again after cleaning' })),
    );
    figures.add('clean_and_available_after_end_s', 'lease end → node cleaned and available again in Ironic', summarize(back.map((t) => (t - end) / 1000)), 's');
    const offAt = await watch.waitFor(uuid['gpu-2']!, (n) => n.power_state === 'power off', { since: end, timeoutMs: 10_000, what: 'powered off' });
    expect(offAt).toBeLessThanOrEqual(back[1]!);

    let endedAt = 0;
    await until(
      async () => {
        const l = await as.ada!.ok('GET', `/v1/leases/${lease.id}`);
        if (l.state === 'ended') endedAt = Date.now();
        return l.state === 'ended';
      },
      30_000,
      'the lease shows ended',
      50,
    );
    figures.add('lease_ended_after_end_s', 'lease end → Leasehold shows the lease ended (all released)', Math.round((endedAt - end) / 10) / 100, 's');

    const released = await as.ada!.events({ lease_id: lease.id, type: 'allocation.released' });
    expect(released.map((e) => e.node_id).sort()).toEqual([...leased].sort());
    figures.add(
      'allocation_released_after_end_s',
      'lease end → allocation.released event (audit log time)',
      summarize(released.map((e) => (Date.parse(e.at) - end) / 1000)),
      's',
    );
    const cleaning = await lh.admin.events({ lease_id: lease.id, type: 'node.cleaning_started' });
    expect(cleaning.map((e) => e.node_id).sort()).toEqual([...leased].sort());
    const poweredOff = await lh.admin.events({ lease_id: lease.id, type: 'node.power_off' });
    expect(poweredOff.map((e) => e.node_id)).toEqual([uuid['gpu-2']]);

    for (const name of LEASED) {
      const node = await ironic.getNode(uuid[name]!);
      expect(node).toMatchObject({ lessee: null, provision_state: 'available', target_provision_state: null, power_state: 'power off' });
      expect(node.extra).not.toHaveProperty('leasehold_lease');
      // Ironic changed its provision state after the end (manage, cleaning, available).
      expect(Date.parse(node.provision_updated_at as string)).toBeGreaterThanOrEqual(Math.floor(end / 1000) * 1000);
      const seenBy = await cliJson(['node', 'show', name], as.pat!.cliEnv).catch(() => cliJson(['node', 'show', name], as.bo!.cliEnv));
      expect(seenBy).toMatchObject({ lessee: null, provision_state: 'available', power_state: 'power off', quarantined: false, lease: null });
    }

    // Back in the pool: the same request can be had again by someone else.
    expect((await cli(['lease', 'quote', ...NEED, '--for', '3d'], as.gil!.cliEnv)).code).toBe(0);
  });
});
