import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createProjectUser, startApp, type TestApp } from '../support/test-app.js';
import { runCli } from './helpers/cli-runner.js';

// Issue 17 end to end: the real `leasehold` against the real API (in-process app on a socket, its clock and the
// CLI's both at 2030-01-01T00:00Z): the operator's --project, the lease list's order and --owner, offer hardware.
const node = (n: number, name: string, memoryGib: number, gpus: number) => ({
  uuid: `4a5e0000-0000-4000-8000-00000000000${n}`,
  name,
  owner: 'optics-lab',
  properties: { memory_mb: memoryGib * 1024, cpus: 32, local_gb: 960, cpu_arch: 'x86_64', gpus },
  traits: [],
});

let t: TestApp;
let owner: { token: string; projectId: string };
let lessee: { token: string; projectId: string };
const as = (token: string) => (...argv: string[]) => runCli(argv, { LEASEHOLD_URL: t.url!, LEASEHOLD_TOKEN: token, LEASEHOLD_CONFIG: '/nonexistent/leasehold.json' });
const operator = (...argv: string[]) => as(ADMIN_TOKEN)(...argv);

beforeAll(async () => {
  t = await startApp({ listen: true, nodes: [node(1, 'optic-1', 128, 2), node(2, 'optic-2', 64, 0)] });
  owner = await createProjectUser(t, 'optics-lab', 'member');
  lessee = await createProjectUser(t, 'solar', 'member');
  for (const n of ['optic-1', 'optic-2']) expect((await as(owner.token)('offer', 'create', n, '--max-lease', '5d')).code).toBe(0);
});
afterAll(() => t.close());

describe('leasehold as the operator, for a project', () => {
  it('lease quote and lease create --project book for that project; its member sees the lease', async () => {
    const quote = await operator('lease', 'quote', '--project', 'solar', '--need', '1:gpus >= 1', '--for', '1h');
    expect(quote.code, quote.stderr).toBe(0);
    expect(quote.stdout).toMatch(/^optic-1 +1$/m);
    const created = await operator('lease', 'create', '--project', 'solar', '--node', 'optic-1', '--for', '1h', '--start', '2030-01-01T10:00:00Z', '--name', 'by-operator', '--json');
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ name: 'by-operator', project_id: lessee.projectId, project_name: 'solar' });
    const mine = await as(lessee.token)('lease', 'list');
    expect(mine.stdout).toMatch(/by-operator +solar +pending/);
  });

  it('without --project the operator is told to give one; a member naming another project is refused; both exit 1, nothing booked', async () => {
    const before = (await operator('lease', 'list', '--json')).stdout;
    const none = await operator('lease', 'create', '--node', 'optic-2', '--for', '1h');
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^error: leases belong to a project: .* --project NAME\|ID \(forbidden, HTTP 403\)$/m);
    const other = await as(lessee.token)('lease', 'create', '--project', 'optics-lab', '--node', 'optic-2', '--for', '1h');
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/^error: only an operator \(admin\) can lease for another project than its own: leave out --project optics-lab/m);
    expect((await operator('lease', 'list', '--json')).stdout).toBe(before);
  });
});

describe('leasehold lease list and offer list', () => {
  it('lists the newest lease first, pages keep that order, --order start lists by start, --owner the leases on that project’s nodes', async () => {
    await t.clock.advance(60_000);
    const later = await as(lessee.token)('lease', 'create', '--node', 'optic-2', '--for', '1h', '--start', '2030-01-01T20:00:00Z', '--name', 'newest');
    expect(later.code, later.stderr).toBe(0);
    const names = (out: string) => out.split('\n').slice(1).filter(Boolean).map((line) => line.split(/ +/)[1]);
    expect(names((await as(lessee.token)('lease', 'list')).stdout)).toEqual(['newest', 'by-operator']);
    expect(names((await as(lessee.token)('lease', 'list', '--limit', '1', '--all')).stdout)).toEqual(['newest', 'by-operator']);
    expect(names((await as(lessee.token)('lease', 'list', '--order', 'start')).stdout)).toEqual(['by-operator', 'newest']);
    expect(names((await as(owner.token)('lease', 'list', '--owner', 'optics-lab')).stdout)).toEqual(['newest', 'by-operator']);
    const strangers = await as(lessee.token)('lease', 'list', '--owner', 'optics-lab');
    expect(strangers.stderr).toBe('no leases found\n');
  });

  it('offer list shows each node’s hardware within 120 columns', async () => {
    const list = await as(lessee.token)('offer', 'list');
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^ID +NODE +MEMORY +CPUS +GPUS +DISK +MAX LEASE +STATUS +FREE \(UTC\)$/);
    expect(list.stdout).toMatch(/ optic-1 +128 GiB +32 +2 +1.03 TB +P5D +active /);
    expect(list.stdout).toMatch(/ optic-2 +64 GiB +32 +0 +1.03 TB +P5D +active /);
    expect(Math.max(...list.stdout.split('\n').map((l) => l.length))).toBeLessThanOrEqual(120);
  });
});
