import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjectUser, startApp, type TestApp } from '../support/test-app.js';
import { runCli } from './helpers/cli-runner.js';

// The CLI against the real API (in-process app on a socket): a lease's nodes one at a time, and an owner's reclaim.
const node = (n: number, name: string, memory_gib: number) => ({
  uuid: `2e5e0000-0000-4000-8000-00000000000${n}`,
  name,
  owner: 'physics-lab',
  properties: { memory_mb: memory_gib * 1024, cpus: 16, local_gb: 480, cpu_arch: 'x86_64', gpus: 1 },
  traits: [],
});
const NODES = [node(1, 'gpu-a', 64), node(2, 'gpu-b', 64), node(3, 'gpu-c', 96), node(4, 'gpu-d', 128)];

let t: TestApp;
let owner: { projectId: string; token: string };
let lessee: { projectId: string; token: string };
const as = (token: string) => (...argv: string[]) => runCli(argv, { LEASEHOLD_URL: t.url!, LEASEHOLD_TOKEN: token, LEASEHOLD_CONFIG: '/nonexistent/leasehold.json' });

beforeAll(async () => {
  t = await startApp({ listen: true, nodes: NODES });
  owner = await createProjectUser(t, 'physics-lab', 'member');
  lessee = await createProjectUser(t, 'astro', 'member');
});
afterAll(async () => {
  await t.close();
});

describe('leasehold lease replace / release / set, node reclaim, offer create --reclaim-notice', () => {
  it('an owner offers with a reclaim notice and the offer shows it', async () => {
    for (const n of ['gpu-a', 'gpu-b', 'gpu-c']) {
      const res = await as(owner.token)('offer', 'create', n);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toMatch(/^reclaim notice +none \(never before a lease ends\)$/m);
    }
    const res = await as(owner.token)('offer', 'create', 'gpu-d', '--reclaim-notice', '1d');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^reclaim notice +P1D$/m);
  });

  let leaseId = '';
  it('lease create --replace ask records the policy and lease show says it in words', async () => {
    const res = await as(lessee.token)('lease', 'create', '--need', '2:gpus >= 1', '--for', '1d', '--replace', 'ask', '--json');
    expect(res.code, res.stderr).toBe(0);
    const lease = JSON.parse(res.stdout);
    expect(lease.replace_policy).toBe('ask');
    leaseId = lease.id;
    const shown = await as(lessee.token)('lease', 'show', leaseId);
    expect(shown.stdout).toMatch(/^replace +ask: a failed node is reported; you ask for a substitute \(lease replace\)$/m);
    const bad = await as(lessee.token)('lease', 'create', '--need', '1:gpus >= 1', '--for', '1d', '--replace', 'sometimes');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("Allowed choices are auto, ask, never");
  });

  it('lease replace swaps a node for the best-fit free one and the table says who replaced whom', async () => {
    const res = await as(lessee.token)('lease', 'replace', leaseId, 'gpu-a', '--reason', 'flaky NIC');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^NODE +GROUP +STATE +NOTE$/m);
    expect(res.stdout).toMatch(/^gpu-a +1 +\S+.*replaced at \S+Z$/m);
    expect(res.stdout).toMatch(/^gpu-c +1 +reserved +replaces gpu-a from \S+Z$/m);
    expect(res.stderr).toContain('gpu-a replaced by gpu-c; gpu-a is being released and wiped');
  });

  it('lease replace of a node not in the lease is the server’s 404, with its hint', async () => {
    const res = await as(lessee.token)('lease', 'replace', leaseId, 'gpu-a');
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('node gpu-a is not (or no longer) in lease');
  });

  it('lease set --replace changes the policy; without --replace it is a usage error', async () => {
    const res = await as(lessee.token)('lease', 'set', leaseId, '--replace', 'never');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain('replace never: a failed node is reported and kept');
    const usage = await as(lessee.token)('lease', 'set', leaseId);
    expect(usage.code).toBe(2);
  });

  it('lease release gives one node back and the lease goes on; releasing the last node ends it', async () => {
    await t.clock.advance(60_000);
    const one = await as(lessee.token)('lease', 'release', leaseId, 'gpu-b');
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/^gpu-b +1 +\S+.*returned at \S+Z$/m);
    expect(one.stderr).toContain('gpu-b is being released and wiped; the lease goes on');
    const last = await as(lessee.token)('lease', 'release', leaseId, 'gpu-c', '--json');
    expect(last.code, last.stderr).toBe(0);
    expect(JSON.parse(last.stdout).end).toBe(t.clock.now().toISOString());
    const shown = await as(lessee.token)('lease', 'release', leaseId, 'gpu-c');
    expect(shown.code).not.toBe(0);
  });

  it('node reclaim needs the notice the offer gives: too early is refused naming the earliest instant; in time the lease is told', async () => {
    const made = await as(lessee.token)('lease', 'create', '--node', 'gpu-d', '--for', '3d', '--json');
    expect(made.code, made.stderr).toBe(0);
    const lease = JSON.parse(made.stdout);
    const early = new Date(t.clock.now().getTime() + 3_600_000).toISOString();
    const refused = await as(owner.token)('node', 'reclaim', 'gpu-d', '--at', early);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('policy_violation');
    const at = new Date(t.clock.now().getTime() + 2 * 86_400_000).toISOString();
    const byLessee = await as(lessee.token)('node', 'reclaim', 'gpu-d', '--at', at);
    expect(byLessee.code).not.toBe(0);
    const res = await as(owner.token)('node', 'reclaim', 'gpu-d', '--at', at);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^LEASE +FROM +SUBSTITUTE$/m);
    expect(res.stdout).toContain(lease.id);
    const past = await as(owner.token)('node', 'reclaim', 'gpu-d', '--at', '2001-01-01T00:00:00Z');
    expect(past.code).toBe(2);
  });
});
