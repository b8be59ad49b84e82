/**
 * Self-test of scripts/ironic-standalone.sh and test/support/ironic.ts against a real Ironic (npm run test:ironic).
 */
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ironicAvailable, startIronic, type IronicHandle, type IronicNode } from '../support/ironic.js';

const avail = ironicAvailable();

const NODES = [
  {
    name: 'ironic-selftest-gpu-0',
    resource_class: 'baremetal.gpu',
    properties: {
      memory_mb: 524288,
      cpus: 64,
      local_gb: 3576,
      cpu_arch: 'x86_64',
      gpus: 8,
      gpu_model: 'nvidia-h100-sxm',
      capabilities: 'boot_mode:uefi,secure_boot:true',
    },
    traits: ['CUSTOM_GPU_H100', 'HW_CPU_X86_AVX512F'],
    owner: 'project-owner-a',
  },
  {
    name: 'ironic-selftest-cpu-0',
    resource_class: 'baremetal.cpu',
    properties: {
      memory_mb: 262144,
      cpus: 96,
      local_gb: 1788,
      cpu_arch: 'x86_64',
      gpus: 0,
      capabilities: 'boot_mode:uefi',
    },
    traits: ['HW_CPU_X86_AVX2'],
  },
  {
    name: 'ironic-selftest-arm-0',
    resource_class: 'baremetal.arm',
    properties: {
      memory_mb: 131072,
      cpus: 80,
      local_gb: 960,
      cpu_arch: 'aarch64',
      gpus: 0,
      capabilities: 'boot_mode:uefi',
    },
    traits: ['CUSTOM_ARM_NEOVERSE_N1'],
  },
];

function baremetal(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('/usr/bin/baremetal', args, { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe.skipIf(!avail.ok)('a real standalone Ironic (noauth)', () => {
  let ironic: IronicHandle;
  let uuids: string[];

  beforeAll(async () => {
    ironic = await startIronic();
    console.log(
      `[ironic] install ${ironic.timings.installMs} ms (0 = already installed), start ${ironic.timings.startMs} ms, at ${ironic.url}`,
    );
    const t0 = performance.now();
    uuids = await ironic.enroll(NODES);
    console.log(`[ironic] ${NODES.length} nodes enrolled to available in ${Math.round(performance.now() - t0)} ms`);
  });
  afterAll(async () => {
    await ironic?.stop();
  });

  it('lists the enrolled nodes with their properties, traits and owner', async () => {
    const { body } = await ironic.request<{ nodes: IronicNode[] }>(
      'GET',
      '/v1/nodes/detail', // `fields` is refused on /detail: 400 "Unexpected arguments: fields"
    );
    const byName = new Map(body.nodes.map((n) => [n.name, n]));
    expect([...byName.keys()].sort()).toEqual(NODES.map((n) => n.name).sort());
    for (const spec of NODES) {
      const n = byName.get(spec.name)!;
      expect(n.provision_state).toBe('available');
      expect(n.power_state).toBe('power off');
      expect(n.properties).toMatchObject(spec.properties);
      expect(n.resource_class).toBe(spec.resource_class);
      expect([...(n.traits as string[])].sort()).toEqual([...spec.traits].sort());
      expect(n.owner).toBe(spec.owner ?? null);
    }
    const traits = await ironic.request<{ traits: string[] }>('GET', `/v1/nodes/${uuids[0]}/traits`);
    expect(traits.body.traits.sort()).toEqual(['CUSTOM_GPU_H100', 'HW_CPU_X86_AVX512F']);
  });

  it('powers a node on', async () => {
    const id = uuids[1]!;
    await ironic.setPowerState(id, 'power on');
    const n = await ironic.waitForNode(id, (x) => x.power_state === 'power on' && !x.target_power_state, {
      what: 'power on',
    });
    expect(n.power_state).toBe('power on');
    await ironic.setPowerState(id, 'power off');
    await ironic.waitForNode(id, (x) => x.power_state === 'power off' && !x.target_power_state);
  });

  it('sets a lessee (microversion ≥ 1.65) and refuses it below', async () => {
    const id = uuids[0]!;
    const old = await ironic.request('PATCH', `/v1/nodes/${id}`, [{ op: 'add', path: '/lessee', value: 'p' }], {
      version: '1.64',
      expect: [400, 406],
    });
    expect([400, 406]).toContain(old.status);
    await ironic.request('PATCH', `/v1/nodes/${id}`, [{ op: 'add', path: '/lessee', value: 'project-lessee-b' }]);
    const n = await ironic.getNode(id);
    expect(n.lessee).toBe('project-lessee-b');
    expect(n.owner).toBe('project-owner-a');
    const filtered = await ironic.request<{ nodes: IronicNode[] }>('GET', '/v1/nodes?lessee=project-lessee-b');
    expect(filtered.body.nodes.map((x) => x.uuid)).toEqual([id]);
  });

  it('deploys, undeploys and comes back to available through cleaning', async () => {
    const id = uuids[2]!;
    const t0 = performance.now();
    await ironic.setProvisionState(id, 'active');
    await ironic.waitForNode(id, (n) => n.provision_state === 'active' && !n.target_provision_state, {
      what: 'active',
    });
    const deployedMs = performance.now() - t0;
    await ironic.setProvisionState(id, 'deleted');
    const n = await ironic.waitForNode(id, (x) => x.provision_state === 'available' && !x.target_provision_state, {
      what: 'available after undeploy',
    });
    expect(n.provision_state).toBe('available');
    console.log(
      `[ironic] deploy ${Math.round(deployedMs)} ms, undeploy → available ${Math.round(performance.now() - t0 - deployedMs)} ms`,
    );
  });

  it('fails manual cleaning with an unsupported step: clean failed with last_error', async () => {
    const id = uuids[2]!;
    await ironic.setProvisionState(id, 'manage');
    await ironic.waitForNode(id, (n) => n.provision_state === 'manageable' && !n.target_provision_state);
    await ironic.setProvisionState(id, 'clean', { clean_steps: [{ interface: 'deploy', step: 'no_such_step' }] });
    const n = await ironic.waitForNode(id, (x) => x.provision_state === 'clean failed', {
      what: 'clean failed',
      fail: () => false,
    });
    expect(n.last_error).toBeTruthy();
    console.log(`[ironic] clean failed as expected: ${n.last_error}`);
    // The way back: manage (→ manageable), provide (→ available).
    await ironic.setProvisionState(id, 'manage');
    await ironic.waitForNode(id, (x) => x.provision_state === 'manageable' && !x.target_provision_state);
    await ironic.setProvisionState(id, 'provide');
    await ironic.waitForNode(id, (x) => x.provision_state === 'available' && !x.target_provision_state);
  });

  it('answers the real baremetal CLI', async () => {
    const res = await baremetal(['--os-endpoint', ironic.url, '--os-auth-type', 'none', 'node', 'list', '-f', 'json']);
    expect(res.code, res.stderr).toBe(0);
    const rows = JSON.parse(res.stdout) as Array<{ Name: string }>;
    expect(rows.map((r) => r.Name).sort()).toEqual(NODES.map((n) => n.name).sort());
  });
});

describe.skipIf(!avail.ok)('a real standalone Ironic (http_basic)', () => {
  let ironic: IronicHandle;

  beforeAll(async () => {
    ironic = await startIronic({ auth: 'http_basic' });
  });
  afterAll(async () => {
    await ironic?.stop();
  });

  it('refuses a request without credentials and accepts one with them', async () => {
    const anon = await ironic.request('GET', '/v1/nodes', undefined, { noAuth: true, expect: [401] });
    expect(anon.status).toBe(401);
    const raw = await fetch(`${ironic.url}/v1/nodes`, {
      headers: { Authorization: `Basic ${Buffer.from(`${ironic.auth!.user}:wrong`).toString('base64')}` },
    });
    expect(raw.status).toBe(401);
    const ok = await ironic.request<{ nodes: unknown[] }>('GET', '/v1/nodes');
    expect(ok.status).toBe(200);
    expect(ok.body.nodes).toEqual([]);
    const [id] = await ironic.enroll([{ name: 'basic-0', properties: { memory_mb: 1024, cpus: 2, cpu_arch: 'x86_64' } }]);
    expect((await ironic.getNode(id!)).provision_state).toBe('available');
  });

  it('answers the real baremetal CLI with http_basic credentials', async () => {
    const { user, password } = ironic.auth!;
    const res = await baremetal([
      '--os-endpoint', ironic.url, '--os-auth-type', 'http_basic', '--os-username', user, '--os-password', password,
      'node', 'list', '-f', 'json',
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect((JSON.parse(res.stdout) as Array<{ Name: string }>).map((r) => r.Name)).toEqual(['basic-0']);
  });
});
