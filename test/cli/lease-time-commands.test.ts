import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjectUser, startApp, type TestApp } from '../support/test-app.js';
import { runCli } from './helpers/cli-runner.js';

// The CLI against the real API (in-process app on a socket, its clock and the CLI's both at 2030-01-01T00:00Z).
const node = (n: number, name: string) => ({
  uuid: `3e5e0000-0000-4000-8000-00000000000${n}`,
  name,
  owner: 'cham-lab',
  properties: { memory_mb: 65536, cpus: 16, local_gb: 480, cpu_arch: 'x86_64' },
  traits: [],
});

let t: TestApp;
let owner: { token: string };
let lessee: { token: string };
let manager: { token: string };
const as = (token: string) => (...argv: string[]) => runCli(argv, { LEASEHOLD_URL: t.url!, LEASEHOLD_TOKEN: token, LEASEHOLD_CONFIG: '/nonexistent/leasehold.json' });

beforeAll(async () => {
  t = await startApp({ listen: true, nodes: [node(1, 'cham-1'), node(2, 'cham-2')] });
  owner = await createProjectUser(t, 'cham-lab', 'member');
  lessee = await createProjectUser(t, 'climate', 'member');
  manager = await createProjectUser(t, 'climate', 'manager');
});
afterAll(async () => {
  await t.close();
});

describe('leasehold: notices, extension policy and auto-renew', () => {
  it('offer create takes the extension policy and shows it in words', async () => {
    const res = await as(owner.token)('offer', 'create', 'cham-1', '--max-lease', '7d', '--extension-window', '2d', '--extension-max-ahead', '7d', '--max-total-length', '14d');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^extension window +within P2D of the end$/m);
    expect(res.stdout).toMatch(/^extends at most +P7D ahead of now$/m);
    expect(res.stdout).toMatch(/^max total length +P14D$/m);
    expect((await as(owner.token)('offer', 'create', 'cham-2')).stdout).not.toMatch(/extension window/);
  });

  let leaseId = '';
  it('lease list says when each lease ends, and lease show which notices are to come', async () => {
    const created = await as(lessee.token)('lease', 'create', '--node', 'cham-1', '--for', '3d', '--json');
    expect(created.code, created.stderr).toBe(0);
    leaseId = JSON.parse(created.stdout).id;
    const list = await as(lessee.token)('lease', 'list');
    expect(list.stdout).toMatch(/ENDS IN/);
    expect(list.stdout).toMatch(new RegExp(`^${leaseId} .* 3d +1$`, 'm'));
    const shown = await as(lessee.token)('lease', 'show', leaseId);
    expect(shown.stdout).toMatch(/^ends in +3d$/m);
    expect(shown.stdout).toMatch(/^notices +P1D before: due 2030-01-03T00:00:00.000Z$/m);
    expect(shown.stdout).toMatch(/^ +PT1H before: due 2030-01-03T23:00:00.000Z$/m);
  });

  it('lease extension says the window is closed until 48 h before the end, and lease extend is refused naming the rule', async () => {
    const quote = await as(lessee.token)('lease', 'extension', leaseId);
    expect(quote.code, quote.stderr).toBe(0);
    expect(quote.stdout).toMatch(/^extendable +no$/m);
    expect(quote.stdout).toMatch(/^limited by +extension_window \(node cham-1\)$/m);
    expect(quote.stdout).toMatch(/^window +closed until 2030-01-02T00:00:00.000Z$/m);
    const refused = await as(lessee.token)('lease', 'extend', leaseId, '--by', '1d');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('extension_window');
  });

  it('lease renew turns auto-renew on with a limit and off again; a step without a limit is a usage error', async () => {
    const on = await as(lessee.token)('lease', 'renew', leaseId, '--auto-renew', '1d', '--renew-max-total', '10d');
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toMatch(/^auto-renew +on: \+P1D at a time until 2030-01-11T00:00:00.000Z$/m);
    const usage = await as(lessee.token)('lease', 'renew', leaseId, '--auto-renew', '1d');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--renew-until');
    const off = await as(lessee.token)('lease', 'renew', leaseId, '--off', '--json');
    expect(JSON.parse(off.stdout).auto_renew).toBeNull();
  });

  it("project set --notice-offsets by the project's manager changes the lease's notices", async () => {
    const set = await as(manager.token)('project', 'set', 'climate', '--notice-offsets', '2h,30m');
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/^notices +PT2H before the end, PT30M before the end$/m);
    const shown = await as(lessee.token)('lease', 'show', leaseId);
    expect(shown.stdout).toMatch(/^notices +PT2H before: due 2030-01-03T22:00:00.000Z$/m);
    const reset = await as(manager.token)('project', 'set', 'climate', '--notice-offsets', 'default');
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).not.toMatch(/^notices/m);
  });
});
