import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseEngine } from '../../src/engine/lease-engine.js';
import { createLogger } from '../../src/logger.js';
import { createProjectUser, startApp, type TestApp } from '../support/test-app.js';
import { runCli } from './helpers/cli-runner.js';

// The CLI against the real API (in-process app on a socket): names wherever people read, and a name or the short
// id prefix the tables print wherever an id is taken, with clear errors for an ambiguous prefix or nothing found.
const node = (uuid: string, name: string) => ({
  uuid,
  name,
  owner: 'physics-lab',
  properties: { memory_mb: 65536, cpus: 16, local_gb: 480, cpu_arch: 'x86_64', gpus: 1 },
  traits: [],
});
// Two nodes share the prefix aa1 (ambiguous); aa12aa12 tells one apart, as the node table's short id does.
const GPU_A = 'aa11aa11-0000-4000-8000-000000000001';
const GPU_B = 'aa12aa12-0000-4000-8000-000000000002';
const NODES = [node(GPU_A, 'gpu-a'), node(GPU_B, 'gpu-b'), node('bb00bb00-0000-4000-8000-000000000003', 'gpu-c')];

let t: TestApp;
let owner: { projectId: string; userId: string; token: string };
let astro: { projectId: string; userId: string; token: string };
let admin: (...argv: string[]) => ReturnType<typeof runCli>;
const as = (token: string) => (...argv: string[]) => runCli(argv, { LEASEHOLD_URL: t.url!, LEASEHOLD_TOKEN: token, LEASEHOLD_CONFIG: '/nonexistent/leasehold.json' });
let nightly: { id: string };
let other: { id: string };
let single: { id: string };

beforeAll(async () => {
  t = await startApp({ listen: true, nodes: NODES });
  admin = as('lh_test-admin-token-0123456789abcdef');
  owner = await createProjectUser(t, 'physics-lab', 'member');
  astro = await createProjectUser(t, 'astro', 'member', 'vera');
  await createProjectUser(t, 'geo', 'member');
  for (const [n, allow] of [['gpu-a', ['astro', 'geo']], ['gpu-b', null], ['gpu-c', null]] as const) {
    const res = await as(owner.token)('offer', 'create', n, ...(allow ?? []).flatMap((p) => ['--allow', p]));
    expect(res.code, res.stderr).toBe(0);
  }
  const create = async (...argv: string[]) => {
    const res = await as(astro.token)('lease', 'create', ...argv, '--for', '1d', '--json');
    expect(res.code, res.stderr).toBe(0);
    return JSON.parse(res.stdout) as { id: string };
  };
  nightly = await create('--name', 'nightly', '--node', 'gpu-a');
  other = await create('--name', 'nightly', '--node', 'gpu-b');
  single = await create('--name', 'one-off', '--node', 'gpu-c');
  const engine = new LeaseEngine({ store: t.store, driver: t.driver, clock: t.clock, logger: createLogger('silent'), inventory: t.inventory, networks: t.teardown, watchMs: 0 });
  await engine.runDue();
}, 60_000);
afterAll(async () => {
  await t.close();
});

describe('names where people read', () => {
  it('user list and user show say the project by name; token create takes the user by name', async () => {
    const list = await admin('user', 'list', '--project', 'astro');
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^NAME +ID +ROLE +PROJECT +CREATED AT$/m);
    expect(list.stdout).toMatch(new RegExp(`^vera +${astro.userId} +member +astro +`, 'm'));
    const shown = await admin('user', 'show', 'vera');
    expect(shown.stdout).toContain(`project     astro (${astro.projectId})`);
    const token = await admin('token', 'create', '--user', 'vera', '--json');
    expect(token.code, token.stderr).toBe(0);
    expect(JSON.parse(token.stdout).user_id).toBe(astro.userId);
  });

  it('lease show says the lessee project by name, and node show the lessee of a leased node, to its owner too', async () => {
    const lease = await as(astro.token)('lease', 'show', single.id);
    expect(lease.stdout).toMatch(new RegExp(`^project +astro \\(${astro.projectId}\\)$`, 'm'));
    for (const token of [owner.token, astro.token]) {
      const shown = await as(token)('node', 'show', 'gpu-a');
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toMatch(new RegExp(`^lessee +astro \\(${astro.projectId}\\)$`, 'm'));
      expect(shown.stdout).toMatch(new RegExp(`^lease +${nightly.id} \\(project astro, until `, 'm'));
    }
  });

  it("the owner's offer list shows the allowed projects by name, though it may not list them", async () => {
    const res = await as(owner.token)('offer', 'list', '--node', 'gpu-a', '--wide');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/ astro, geo +active /);
  });

  it('event list names the node and the project in their columns and in the messages', async () => {
    const res = await as(astro.token)('event', 'list', '--lease', nightly.id.slice(0, 8), '--type', 'allocation');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^AT +TYPE +OUTCOME +ACTOR +NODE +PROJECT +LEASE +MESSAGE$/m);
    expect(res.stdout).toMatch(/ engine +gpu-a +astro +\w{8} +node gpu-a handed to project astro$/m);
    expect(res.stdout).not.toContain(GPU_A);
  });
});

describe('a name or an id prefix wherever an id is taken', () => {
  it('a lease by its full id, its unique name, or the 8-character prefix the tables print', async () => {
    for (const ref of [single.id, 'one-off', single.id.slice(0, 8), single.id.slice(0, 8).toUpperCase()]) {
      const res = await as(astro.token)('lease', 'show', ref, '--json');
      expect(res.code, `${ref}: ${res.stderr}`).toBe(0);
      expect(JSON.parse(res.stdout).id).toBe(single.id);
    }
    const extended = await as(astro.token)('lease', 'extend', 'one-off', '--by', '1h', '--json');
    expect(extended.code, extended.stderr).toBe(0);
    expect(JSON.parse(extended.stdout).id).toBe(single.id);
  });

  it('a name two leases share is ambiguous: both listed by name and id, exit 1, nothing changed', async () => {
    const res = await as(astro.token)('lease', 'cancel', 'nightly');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('2 leases you can see have the name "nightly": ');
    for (const l of [nightly, other]) expect(res.stderr).toContain(`nightly (${l.id})`);
    expect(res.stderr).toContain('(ambiguous)');
    const states = await Promise.all([nightly, other].map(async (l) => JSON.parse((await as(astro.token)('lease', 'show', l.id, '--json')).stdout).state));
    expect(states).not.toContain('cancelled');
  });

  it('under --json an ambiguous or unknown reference is the API error shape on stdout, with the same exit code', async () => {
    const ambiguous = await as(astro.token)('lease', 'show', 'nightly', '--json');
    expect(ambiguous.code).toBe(1);
    const body = JSON.parse(ambiguous.stdout);
    expect(body.error).toMatchObject({ code: 'ambiguous', details: { kind: 'lease', ref: 'nightly' } });
    expect(body.error.details.candidates.map((c: { id: string }) => c.id).sort()).toEqual([nightly.id, other.id].sort());

    const unknown = await as(astro.token)('lease', 'show', 'no-such-lease', '--json');
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toEqual({
      error: {
        code: 'not_found',
        message: 'lease "no-such-lease" not found: no lease you can see has that name, id or id prefix',
        details: { resource: 'lease', id: 'no-such-lease' },
      },
    });
  });

  it('a node by name or unique prefix; an ambiguous prefix lists the nodes; an unknown one is the server’s 404', async () => {
    for (const ref of ['gpu-b', 'aa12aa12', GPU_B]) {
      const res = await as(owner.token)('node', 'show', ref, '--json');
      expect(res.code, `${ref}: ${res.stderr}`).toBe(0);
      expect(JSON.parse(res.stdout).id).toBe(GPU_B);
    }
    const ambiguous = await as(owner.token)('node', 'power', 'aa1', 'on');
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain(`2 nodes you can see have the id prefix "aa1": gpu-a (${GPU_A}), gpu-b (${GPU_B}); give more of the id, or the name`);
    const unknown = await as(owner.token)('node', 'show', 'ffff');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('node "ffff" not found (not_found, HTTP 404)');
  });

  it("a node of a lease by its prefix among the lease's own nodes", async () => {
    // A minute into the lease: giving back its only node at its very start would leave an empty window.
    await t.clock.advanceTo(new Date(t.clock.now().getTime() + 60_000));
    const res = await as(astro.token)('lease', 'release', 'one-off', 'bb00', '--json');
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).id).toBe(single.id);
  });

  it('projects, users, offers and tokens by prefix; a prefix another project holds is not found', async () => {
    const project = await admin('project', 'show', astro.projectId.slice(0, 8), '--json');
    expect(JSON.parse(project.stdout).name).toBe('astro');
    const user = await admin('user', 'show', astro.userId.slice(0, 8), '--json');
    expect(JSON.parse(user.stdout).name).toBe('vera');
    const offers = JSON.parse((await as(owner.token)('offer', 'list', '--json')).stdout).offers as { id: string }[];
    const offer = await as(owner.token)('offer', 'show', offers[0]!.id.slice(0, 8), '--json');
    expect(JSON.parse(offer.stdout).id).toBe(offers[0]!.id);
    const tokens = JSON.parse((await admin('token', 'list', '--user', 'vera', '--json')).stdout).tokens as { id: string }[];
    expect(tokens.length).toBeGreaterThan(0);
    const hidden = await as(owner.token)('lease', 'show', nightly.id.slice(0, 8));
    // The owner of gpu-a sees the lease on its node; a project with nothing to do with it does not.
    expect(hidden.code, hidden.stderr).toBe(0);
    const geo = await createProjectUser(t, 'geo', 'member', 'geo-2');
    const stranger = await as(geo.token)('lease', 'show', nightly.id.slice(0, 8));
    expect(stranger.code).toBe(1);
    expect(stranger.stderr).toContain(`lease "${nightly.id.slice(0, 8)}" not found`);
  });
});
