import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedNetworks } from '../../src/drivers/simulated/simulated-networks.js';
import { createProjectUser, startApp, type TestApp } from '../support/test-app.js';
import { runCli } from './helpers/cli-runner.js';

// The CLI against the real API (in-process app on a socket, simulated networks): one command instead of many.
let t: TestApp;
let lessee: { projectId: string; token: string };
let cli: (...argv: string[]) => ReturnType<typeof runCli>;

beforeAll(async () => {
  t = await startApp({ listen: true });
  const owner = await createProjectUser(t, 'physics-lab', 'member');
  lessee = await createProjectUser(t, 'astro', 'member');
  const sim = t.networks as SimulatedNetworks;
  sim.createNetwork({ name: 'astro-lab', project_id: lessee.projectId });
  sim.createNetwork({ name: 'astro-data', project_id: lessee.projectId });
  sim.createNetwork({ name: 'public', project_id: 'admin', shared: true, network_type: 'flat' });
  expect((await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'gpu-01' } })).status).toBe(201);
  expect((await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['gpu-01'], duration: '1d' } })).status).toBe(201);
  cli = (...argv) => runCli(argv, { LEASEHOLD_URL: t.url!, LEASEHOLD_TOKEN: lessee.token, LEASEHOLD_CONFIG: '/nonexistent/leasehold.json' });
});
afterAll(async () => {
  await t.close();
});

describe('leasehold network and node network', () => {
  it('network list shows the networks the lessee may use with their VLANs', async () => {
    const res = await cli('network', 'list');
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME +ID +TYPE +VLAN +PHYSNET +SHARED +PROJECT$/);
    expect(lines.slice(1).map((l) => l.split(/ +/)[0])).toEqual(['astro-data', 'astro-lab', 'public']);
    expect(lines.find((l) => l.startsWith('astro-lab'))).toMatch(/ vlan +1\d\d +physnet1 +no /);
  });

  it('node network attach plugs a network in with one command; node network list shows NIC → network → VLAN', async () => {
    const attach = await cli('node', 'network', 'attach', 'gpu-01', 'astro-lab');
    expect(attach.code, attach.stderr).toBe(0);
    expect(attach.stdout).toMatch(/^state +attached$/m);
    expect(attach.stdout).toMatch(/^port .*\(created by Leasehold: deleted on detach\)$/m);
    const list = await cli('node', 'network', 'list', 'gpu-01');
    expect(list.code).toBe(0);
    const rows = list.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^NODE +MAC +PHYSNET +NETWORK +VLAN +TAGGED +BINDING +PORT +ATTACHMENT$/);
    expect(rows.filter((r) => / astro-lab +1\d\d +- +unbound /.test(r))).toHaveLength(1);
    expect(rows.filter((r) => / physnet1 +- +- +- +- +- +-$/.test(r))).toHaveLength(1);
    const all = await cli('node', 'network', 'list');
    expect(all.stdout).toContain('astro-lab');
  });

  it('a trunk is attached with --tagged, and --tagged on the same network adds to it; detach of a tagged network takes it off the trunk', async () => {
    const attach = await cli('node', 'network', 'attach', 'gpu-01', 'public', '--tagged', 'astro-data');
    expect(attach.code, attach.stderr).toBe(0);
    expect(attach.stdout).toMatch(/^tagged +astro-data \(VLAN 1\d\d\)$/m);
    const untag = await cli('node', 'network', 'detach', 'gpu-01', 'astro-data');
    expect(untag.code, untag.stderr).toBe(0);
    expect(untag.stdout).toContain('Removed tagged network astro-data from the trunk on public');
    const again = await cli('node', 'network', 'attach', 'gpu-01', 'public', '--tagged', 'astro-data');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^tagged +astro-data/m);
  });

  it('errors are the server’s words with the usual exit code: another project’s network, a MAC not on the node', async () => {
    const missing = await cli('node', 'network', 'attach', 'gpu-01', 'geo-secret');
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('network "geo-secret" not found');
    const mac = await cli('node', 'network', 'attach', 'gpu-01', 'astro-data', '--mac', '00:11:22:33:44:55');
    expect(mac.code).not.toBe(0);
    expect(mac.stderr).toContain('has no NIC with MAC 00:11:22:33:44:55');
    const usage = await cli('node', 'network', 'detach', 'gpu-01');
    expect(usage.code).toBe(2);
  });

  it('node network detach --all takes every network of the lessee off the node and deletes the ports Leasehold made', async () => {
    const res = await cli('node', 'network', 'detach', 'gpu-01', '--all');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('Detached astro-lab from gpu-01');
    expect(res.stdout).toContain('Detached public from gpu-01');
    expect((t.networks as SimulatedNetworks).allPorts()).toEqual([]);
    const json = await cli('--json', 'node', 'network', 'list', 'gpu-01');
    expect(JSON.parse(json.stdout).nics.every((n: { in_use: boolean }) => !n.in_use)).toBe(true);
  });
});
