import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjectUser, startApp, type TestApp } from '../support/test-app.js';
import { runCli } from './helpers/cli-runner.js';

// The CLI against the real API (in-process app on a socket): a lessee sub-leases a node it holds; lease show and
// node show print the chain from both ends; the rules' refusals reach the user with their names.
const node = (n: number, name: string) => ({
  uuid: `3e5e0000-0000-4000-8000-00000000000${n}`,
  name,
  owner: 'physics-lab',
  properties: { memory_mb: 64 * 1024, cpus: 16, local_gb: 480, cpu_arch: 'x86_64', gpus: 1 },
  traits: [],
});

let t: TestApp;
let owner: { projectId: string; token: string };
let lessee: { projectId: string; token: string };
let sub: { projectId: string; token: string };
const as = (token: string) => (...argv: string[]) => runCli(argv, { LEASEHOLD_URL: t.url!, LEASEHOLD_TOKEN: token, LEASEHOLD_CONFIG: '/nonexistent/leasehold.json' });
const iso = (hours: number) => new Date(t.clock.now().getTime() + hours * 3_600_000).toISOString();

beforeAll(async () => {
  t = await startApp({ listen: true, nodes: [node(1, 'gpu-s')] });
  owner = await createProjectUser(t, 'physics-lab', 'member');
  lessee = await createProjectUser(t, 'astro', 'member');
  sub = await createProjectUser(t, 'geo', 'member');
  expect((await as(owner.token)('offer', 'create', 'gpu-s', '--allow', 'astro')).code).toBe(0);
});
afterAll(async () => {
  await t.close();
});

describe('leasehold offer create by a lessee, lease show and node show with a sub-lease', () => {
  it('a lessee sub-leases its node; the sub-lessee leases it; both ends print the chain; past the lease and re-offering are refused by name', async () => {
    const parent = await as(lessee.token)('--json', 'lease', 'create', '--node', 'gpu-s', '--for', '10h');
    expect(parent.code, parent.stderr).toBe(0);
    const parentId = JSON.parse(parent.stdout).id as string;

    const outside = await as(lessee.token)('offer', 'create', 'gpu-s', '--allow', 'geo', '--end', iso(12));
    expect(outside.code).not.toBe(0);
    expect(outside.stderr).toContain('sublease_within_lease');

    const offer = await as(lessee.token)('offer', 'create', 'gpu-s', '--allow', 'geo', '--end', iso(5));
    expect(offer.code, offer.stderr).toBe(0);
    expect(offer.stdout).toMatch(new RegExp(`^sublease of +${parentId}$`, 'm'));

    const leased = await as(sub.token)('--json', 'lease', 'create', '--node', 'gpu-s', '--for', '2h');
    expect(leased.code, leased.stderr).toBe(0);
    const subId = JSON.parse(leased.stdout).id as string;

    const shown = await as(owner.token)('lease', 'show', parentId);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`sub-leased to geo (`);
    expect(shown.stdout).toContain(subId);
    const subShown = await as(sub.token)('lease', 'show', subId);
    expect(subShown.stdout).toContain(`sublease of `);
    expect(subShown.stdout).toContain(`(astro, ${parentId})`);

    const nodeShown = await as(owner.token)('node', 'show', 'gpu-s');
    expect(nodeShown.stdout).toMatch(new RegExp(`^sublease of +.*${parentId} \\(project astro, until `, 'm'));

    const again = await as(sub.token)('offer', 'create', 'gpu-s', '--allow', 'astro');
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('sublease_one_level');
  });
});
