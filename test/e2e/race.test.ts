import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_SKIP_REASON, TEST_DATABASE_URL, testDatabases } from '../support/postgres.js';
import { startServerProcess, type ServerProcess } from '../support/processes.js';

const ADMIN = 'lh_race-admin-token-0123456789abcdef';
const NODES = JSON.stringify(
  Array.from({ length: 5 }, (_, i) => ({
    uuid: `7ace0000-0000-4000-8000-00000000000${i}`,
    name: `race-${i}`,
    owner: 'pool',
    properties: { memory_mb: 16384, cpus: 8, local_gb: 200, cpu_arch: 'x86_64' },
  })),
);

/** Requests ≥ 50 leases at once through two replicas; the database's exclusion constraint decides. */
describe.skipIf(!TEST_DATABASE_URL)('no double booking under a race, on PostgreSQL with two replicas', () => {
  const dbs = testDatabases(undefined, 'leasehold_race');
  let dbUrl = '';
  let servers: ServerProcess[] = [];
  let tokens: string[] = [];

  async function api(server: ServerProcess, token: string, method: string, path: string, body?: unknown) {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json().catch(() => null)) as any };
  }

  beforeAll(async () => {
    const db = await dbs.create();
    dbUrl = db.url;
    const env = { DATABASE_URL: db.url, LEASEHOLD_ADMIN_TOKEN: ADMIN, LEASEHOLD_SIMULATED_NODES: NODES, LEASEHOLD_ROLE: 'api' };
    servers = await Promise.all([0, 1].map(async () => startServerProcess({ ...env, LEASEHOLD_DATA_DIR: await mkdtemp(join(tmpdir(), 'lh-race-')) })));
    const [a] = servers;
    await api(a!, ADMIN, 'POST', '/v1/projects', { name: 'pool' });
    const owner = await api(a!, ADMIN, 'POST', '/v1/users', { name: 'pool-owner', project_id: 'pool', role: 'member' });
    const ownerToken = (await api(a!, ADMIN, 'POST', '/v1/tokens', { user_id: owner.body.id })).body.token;
    for (let i = 0; i < 5; i++) {
      expect((await api(a!, ownerToken, 'POST', '/v1/offers', { node_id: `race-${i}` })).status).toBe(201);
    }
    // Ten lessee projects, so the race is between tenants, not within one.
    for (let p = 0; p < 10; p++) {
      await api(a!, ADMIN, 'POST', '/v1/projects', { name: `tenant-${p}` });
      const user = await api(a!, ADMIN, 'POST', '/v1/users', { name: `tenant-${p}-user`, project_id: `tenant-${p}`, role: 'member' });
      tokens.push((await api(a!, ADMIN, 'POST', '/v1/tokens', { user_id: user.body.id })).body.token);
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await dbs.dropAll();
  });

  async function overlaps(): Promise<number> {
    const client = new pg.Client({ connectionString: dbUrl });
    await client.connect();
    try {
      const { rows } = await client.query(
        `select count(*)::int as n from allocations a join allocations b
           on a.node_id = b.node_id and a.id < b.id and a.holds and b.holds and a.blocked && b.blocked`,
      );
      return rows[0].n;
    } finally {
      await client.end();
    }
  }

  it('60 concurrent requests for one node in one window: exactly one wins, 59 get 409', async () => {
    const start = new Date(Date.now() + 3_600_000).toISOString();
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        api(servers[i % 2]!, tokens[i % 10]!, 'POST', '/v1/leases', { nodes: ['race-0'], start, duration: '1h' }),
      ),
    );
    const statuses = results.map((r) => r.status);
    const odd = results.filter((r) => r.status !== 201 && r.status !== 409);
    expect(odd, JSON.stringify(odd)).toEqual([]);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(59);
    for (const r of results.filter((x) => x.status === 409)) {
      expect(['lease_unavailable', 'lease_conflict']).toContain(r.body.error.code);
    }
    expect(await overlaps()).toBe(0);
  });

  it('60 concurrent requests by requirement for 5 nodes: exactly 5 win, each a different node', async () => {
    const start = new Date(Date.now() + 5 * 3_600_000).toISOString();
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        api(servers[i % 2]!, tokens[i % 10]!, 'POST', '/v1/leases', { groups: [{ count: 1, where: 'cpus >= 8' }], start, duration: '2h' }),
      ),
    );
    const won = results.filter((r) => r.status === 201);
    const odd = results.filter((r) => r.status !== 201 && r.status !== 409);
    expect(odd, JSON.stringify(odd)).toEqual([]);
    expect(won).toHaveLength(5);
    expect(new Set(won.map((r) => r.body.allocations[0].node_name)).size).toBe(5);
    expect(results.filter((r) => r.status === 409)).toHaveLength(55);
    for (const r of results.filter((x) => x.status === 409)) {
      expect(['lease_unavailable', 'lease_conflict']).toContain(r.body.error.code);
    }
    expect(await overlaps()).toBe(0);
  });
});

if (!TEST_DATABASE_URL) console.warn(`race.test.ts: ${POSTGRES_SKIP_REASON}`);
