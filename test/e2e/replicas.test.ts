import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { POSTGRES_SKIP_REASON, TEST_DATABASE_URL, testDatabases } from '../support/postgres.js';
import { cli, cliJson, startServerProcess, type ServerProcess } from '../support/processes.js';

const NODES = JSON.stringify([
  { uuid: 'b0000000-0000-4000-8000-000000000001', name: 'shared-1', owner: 'team-a', properties: { memory_mb: 8192, cpus: 4, local_gb: 100, cpu_arch: 'x86_64' } },
  { uuid: 'b0000000-0000-4000-8000-000000000002', name: 'shared-2', owner: 'team-b', properties: { memory_mb: 8192, cpus: 4, local_gb: 100, cpu_arch: 'x86_64' } },
]);
const ADMIN = 'lh_replica-admin-token-0123456789';

describe.skipIf(!TEST_DATABASE_URL)('two server processes on one PostgreSQL database', () => {
  const dbs = testDatabases(undefined, 'leasehold_e2e');
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    for (const s of servers) s.kill();
    await dbs.dropAll();
  });

  it('start at the same moment on an empty database and share every write', async () => {
    const db = await dbs.create();
    const env = { DATABASE_URL: db.url, LEASEHOLD_ADMIN_TOKEN: ADMIN, LEASEHOLD_SIMULATED_NODES: NODES };
    // Both migrate and bootstrap concurrently: the advisory locks must make that safe.
    const [a, b] = await Promise.all([
      startServerProcess({ ...env, LEASEHOLD_DATA_DIR: await mkdtemp(join(tmpdir(), 'leasehold-replica-')) }),
      startServerProcess({ ...env, LEASEHOLD_DATA_DIR: await mkdtemp(join(tmpdir(), 'leasehold-replica-')) }),
    ]);
    servers.push(a!, b!);
    const onA = { LEASEHOLD_URL: a!.url, LEASEHOLD_TOKEN: ADMIN };
    const onB = { LEASEHOLD_URL: b!.url, LEASEHOLD_TOKEN: ADMIN };

    await cliJson(['project', 'create', 'team-a'], onA);
    expect((await cliJson(['project', 'show', 'team-a'], onB)).name).toBe('team-a');

    const users = await cliJson(['user', 'list'], onB);
    expect(users.users.filter((u: { name: string }) => u.name === 'admin')).toHaveLength(1);

    const user = await cliJson(['user', 'create', 'ann', '--project', 'team-a', '--role', 'reader'], onB);
    const token = await cliJson(['token', 'create', '--user', user.id], onB);
    const annOnA = { LEASEHOLD_URL: a!.url, LEASEHOLD_TOKEN: token.token };
    const annOnB = { LEASEHOLD_URL: b!.url, LEASEHOLD_TOKEN: token.token };
    expect((await cliJson(['node', 'list'], annOnA)).nodes.map((n: { name: string }) => n.name)).toEqual(['shared-1']);

    expect((await cli(['token', 'revoke', token.id], onA)).code).toBe(0);
    const refused = await cli(['whoami'], annOnB);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('unauthenticated');
  });
});

if (!TEST_DATABASE_URL) console.warn(`replicas.test.ts: ${POSTGRES_SKIP_REASON}`);
