import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, cliJson, startServerProcess, type ServerProcess } from '../support/processes.js';

const NODES = JSON.stringify([
  { uuid: 'a0000000-0000-4000-8000-000000000001', name: 'phys-gpu-1', owner: 'physics-lab', properties: { memory_mb: 65536, cpus: 32, local_gb: 480, cpu_arch: 'x86_64', gpus: 1 }, driver_info: { ipmi_password: 'hunter2-bmc' } },
  { uuid: 'a0000000-0000-4000-8000-000000000002', name: 'phys-gpu-2', owner: 'physics-lab', properties: { memory_mb: 131072, cpus: 64, local_gb: 960, cpu_arch: 'x86_64', gpus: 2 } },
  { uuid: 'a0000000-0000-4000-8000-000000000003', name: 'bio-store-1', owner: 'bio-lab', properties: { memory_mb: 16384, cpus: 8, local_gb: 4000, cpu_arch: 'x86_64' } },
]);

describe('the real server process on the embedded store', () => {
  let dataDir: string;
  let home: string;
  let server: ServerProcess | undefined;
  let aliceToken = '';

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'leasehold-e2e-'));
    home = await mkdtemp(join(tmpdir(), 'leasehold-home-'));
  });
  afterAll(async () => {
    server?.kill();
    await rm(dataDir, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  });

  const serverEnv = () => ({ LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_SIMULATED_NODES: NODES, HOME: home });

  it('an operator bootstraps with the admin token from its file and a new user sees exactly its project nodes', async () => {
    server = await startServerProcess(serverEnv());
    const tokenFile = join(dataDir, 'admin-token');
    const adminToken = (await readFile(tokenFile, 'utf8')).trim();
    expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
    // stdout is a pipe here (a log someone keeps): the token is not in it, only where to find it.
    expect(server.output()).not.toContain(adminToken);
    expect(server.output()).toContain(`Admin token saved to ${tokenFile}`);
    // …and, not being a terminal, it holds JSON lines only: the URL and the token's file are log records too.
    const lines = server.output().split('\n').filter((l) => l.trim() !== '');
    expect(lines.map((l) => () => JSON.parse(l)).every((parse) => typeof parse() === 'object')).toBe(true);
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(expect.arrayContaining([expect.stringContaining(`Leasehold listening on ${server.url}`)]));
    expect(adminToken).toMatch(/^lh_/);

    const admin = { LEASEHOLD_URL: server.url, LEASEHOLD_TOKEN: adminToken, HOME: home };
    const project = await cliJson(['project', 'create', 'physics-lab'], admin);
    expect(project.name).toBe('physics-lab');
    const user = await cliJson(['user', 'create', 'alice', '--project', 'physics-lab', '--role', 'member'], admin);
    const token = await cliJson(['token', 'create', '--user', user.id], admin);
    expect(token.token).toMatch(/^lh_/);
    aliceToken = token.token;

    const alice = { LEASEHOLD_URL: server.url, LEASEHOLD_TOKEN: token.token, HOME: home };
    const nodes = await cliJson(['node', 'list'], alice);
    expect(nodes.nodes.map((n: { name: string }) => n.name)).toEqual(['phys-gpu-1', 'phys-gpu-2']);
    expect(JSON.stringify(nodes)).not.toContain('hunter2-bmc');

    const table = await cli(['node', 'list'], alice);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('phys-gpu-1');
    expect(table.stdout).not.toContain('bio-store-1');

    const hidden = await cli(['node', 'show', 'a0000000-0000-4000-8000-000000000003'], alice);
    expect(hidden.code).not.toBe(0);
    expect(hidden.stderr).toContain('not found');

    const denied = await cli(['project', 'create', 'sneaky'], alice);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/admin/);
  });

  it('data, tokens and the simulated machines survive a restart, and SIGTERM stops the server cleanly', async () => {
    const admin0 = (await readFile(join(dataDir, 'admin-token'), 'utf8')).trim();
    const asAdmin = { LEASEHOLD_URL: server!.url, LEASEHOLD_TOKEN: admin0, HOME: home };
    const powered = await cli(['node', 'power', 'phys-gpu-2', 'on', '--wait'], asAdmin);
    expect(powered.code, powered.stderr).toBe(0);
    expect(await server!.stop()).toBe(0);
    server = await startServerProcess(serverEnv());
    expect(server.output()).not.toContain('Admin token');
    const admin = { LEASEHOLD_URL: server.url, LEASEHOLD_TOKEN: admin0, HOME: home };
    const projects = await cliJson(['project', 'list'], admin);
    expect(projects.projects.map((p: { name: string }) => p.name)).toEqual(['physics-lab']);
    const users = await cliJson(['user', 'list'], admin);
    const alice = users.users.find((u: { name: string }) => u.name === 'alice');
    const tokens = await cliJson(['token', 'list', '--user', alice.id], admin);
    expect(tokens.tokens).toHaveLength(1);
    const aliceNodes = await cliJson(['node', 'list'], { ...admin, LEASEHOLD_TOKEN: aliceToken });
    expect(aliceNodes.nodes.map((n: { name: string }) => n.name)).toEqual(['phys-gpu-1', 'phys-gpu-2']);
    // The simulated hardware lives in the store: the machine is still on, and nothing was "repaired".
    expect((await cliJson(['node', 'show', 'phys-gpu-2'], admin)).power_state).toBe('power on');
    expect((await cliJson(['node', 'show', 'phys-gpu-1'], admin)).power_state).toBe('power off');
    expect(server.output()).not.toContain('drift repaired');
    expect(await server.stop()).toBe(0);
    server = undefined;
  });
});

describe('the embedded store', () => {
  it('refuses a second process on the same data directory instead of corrupting it, and recovers from a crash', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'leasehold-lock-'));
    const env = { LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_SIMULATED_NODES: NODES, LEASEHOLD_ADMIN_TOKEN: 'lh_lock-test-admin-token-0123456789abcdef' };
    const first = await startServerProcess(env);
    try {
      await expect(startServerProcess(env)).rejects.toThrow(/in use by process \d+/);
      first.kill(); // SIGKILL: the lock file stays behind
      await new Promise((resolve) => first.proc.once('exit', resolve));
      const second = await startServerProcess(env);
      const res = await fetch(`${second.url}/v1/me`, { headers: { authorization: 'Bearer lh_lock-test-admin-token-0123456789abcdef' } });
      expect(res.status).toBe(200);
      expect(await second.stop()).toBe(0);
    } finally {
      first.kill();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the first start', () => {
  it('refuses an operator-chosen admin token shorter than 32 characters, saying so, and creates nothing', async () => {
    const dataDir = join(await mkdtemp(join(tmpdir(), 'leasehold-short-')), 'data');
    try {
      await expect(startServerProcess({ LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_ADMIN_TOKEN: 'a' })).rejects.toThrow(
        /exited with 1 before listening[\s\S]*LEASEHOLD_ADMIN_TOKEN must be at least 32 characters \(it has 1\)/,
      );
      await expect(stat(dataDir)).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      await rm(join(dataDir, '..'), { recursive: true, force: true });
    }
  });
});
