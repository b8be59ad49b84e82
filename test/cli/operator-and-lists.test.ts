import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiError, FakeApi } from './helpers/fake-api.js';
import { runCli } from './helpers/cli-runner.js';
import { lease, NODE_ID, offer, OFFER_ID, project } from './helpers/fixtures.js';

// Issue 17: the operator leasing for a project (--project), `lease list` newest first with --owner, and the
// hardware of offered nodes in `offer list`.
let api: FakeApi;

beforeEach(async () => {
  api = await new FakeApi().start();
});
afterEach(() => api.stop());

const cli = (...argv: string[]) =>
  runCli(argv, { LEASEHOLD_URL: api.url, LEASEHOLD_TOKEN: 'lh_test', LEASEHOLD_CONFIG: '/nonexistent/leasehold.json' });
const ok = (body: unknown) => ({ status: 200, body });
const NEED = ['--need', '2:gpus >= 1', '--for', '1d'];
const BODY = { groups: [{ count: 2, where: 'gpus >= 1' }], duration: 'P1D' };

describe('leasehold lease create/quote --project', () => {
  it('sends the project the operator leases for, by name or id, with create and with quote', async () => {
    api.on('POST', '/v1/leases', { status: 201, body: lease });
    api.on('POST', '/v1/leases/quote', ok({ start: lease.start, end: lease.end, duration: 'P1D', allocations: [] }));
    expect((await cli('lease', 'create', '--project', 'physics-lab', ...NEED)).code).toBe(0);
    expect((await cli('lease', 'quote', '--project', project.id, ...NEED)).code).toBe(0);
    expect(api.requests.map((r) => [r.method, r.path, r.body])).toEqual([
      ['POST', '/v1/leases', { ...BODY, project: 'physics-lab' }],
      ['POST', '/v1/leases/quote', { ...BODY, project: project.id }],
    ]);
  });

  it("a non-operator's --project refused by the server says to leave it out, and exits 1", async () => {
    api.on('POST', '/v1/leases', apiError(403, 'forbidden', 'only an operator (admin) can lease for another project; leave out `project` to lease for your own', { field: 'project' }));
    const result = await cli('lease', 'create', '--project', 'geo', ...NEED);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'error: only an operator (admin) can lease for another project than its own: leave out --project geo to lease for your project (forbidden, HTTP 403)\n' +
        'details: {"field":"project"}\n',
    );
  });

  it('an operator without a project who gives no --project is told to give one', async () => {
    api.on('POST', '/v1/leases/quote', apiError(403, 'forbidden', 'leases belong to a project: as an operator without one, name the project', { field: 'project' }));
    const result = await cli('lease', 'quote', ...NEED);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'error: leases belong to a project: as an operator without one, say which project the lease is for with --project NAME|ID (forbidden, HTTP 403)\n' +
        'details: {"field":"project"}\n',
    );
  });

  it("other 403s (a reader creating a lease) keep the server's words", async () => {
    api.on('POST', '/v1/leases', apiError(403, 'forbidden', 'readers cannot create leases; a member can'));
    const result = await cli('lease', 'create', '--project', 'physics-lab', ...NEED);
    expect(result).toMatchObject({ code: 1, stderr: 'error: readers cannot create leases; a member can (forbidden, HTTP 403)\n' });
  });
});

describe('leasehold lease list', () => {
  it('asks for the newest first, passes --owner, and keeps the order when paging with --all (the next link carries it)', async () => {
    api.on('GET', '/v1/leases', (request) =>
      request.query.marker === undefined
        ? ok({ leases: [lease], next: `/v1/leases?owner=physics-lab&order=newest&marker=${lease.id}` })
        : ok({ leases: [], next: null }),
    );
    const result = await cli('lease', 'list', '--owner', 'physics-lab', '--all', '--json');
    expect(result.code).toBe(0);
    expect(api.requests.map((r) => r.query)).toEqual([
      { owner: 'physics-lab', order: 'newest' },
      { owner: 'physics-lab', order: 'newest', marker: lease.id },
    ]);
  });

  it('--order start lists by start instead; an unknown order is a usage error (exit 2)', async () => {
    api.on('GET', '/v1/leases', ok({ leases: [], next: null }));
    await cli('lease', 'list', '--order', 'start');
    expect(api.only().query).toEqual({ order: 'start' });
    expect((await cli('lease', 'list', '--order', 'oldest')).code).toBe(2);
  });
});

describe('leasehold offer list', () => {
  const GIB = 2 ** 30;
  const facts = (memoryGib: number, cpus: number, gpus: number, diskBytes: number) => ({ memory: memoryGib * GIB, cpus, gpus, disk: diskBytes, cpu_arch: 'x86_64' });
  const big = { ...offer, node_name: 'gpu-huge-rack12-01', node_facts: facts(1024, 128, 8, 3_840_000_000_000) };
  const later = {
    ...offer,
    id: 'f0f0f0f0-2222-4bbb-8bbb-000000000002',
    node_name: null,
    node_facts: facts(64, 16, 1, 480 * GIB),
    status: 'scheduled',
    start: '2030-02-01T00:00:00.000Z',
    end: '2030-03-01T00:00:00.000Z',
    max_lease_duration: null,
    allowed_projects: [project.id],
    allowed_project_names: [project.name],
    free_windows: [{ start: '2030-02-01T00:00:00.000Z', end: '2030-03-01T00:00:00.000Z' }],
  };
  const old = { ...offer, id: 'f0f0f0f0-2222-4bbb-8bbb-000000000003', free_windows: [] };

  it('shows the hardware of each node and fits 120 columns', async () => {
    api.on('GET', '/v1/offers', ok({ offers: [big, later, old], next: null }));
    const result = await cli('offer', 'list');
    expect(result.stdout).toBe(
      [
        'ID        NODE                MEMORY    CPUS  GPUS  DISK     MAX LEASE  STATUS     FREE (UTC)',
        `${OFFER_ID.slice(0, 8)}  gpu-huge-rack12-01  1024 GiB  128   8     3.84 TB  P5D        active     now → open`,
        `f0f0f0f0  ${NODE_ID.slice(0, 8)}            64 GiB    16    1     515 GB   unlimited  scheduled  2030-02-01 00:00 → 2030-03-01 00:00`,
        `f0f0f0f0  gpu-01              -         -     -     -        P5D        active     none`,
        '',
      ].join('\n'),
    );
    expect(Math.max(...result.stdout.split('\n').map((line) => line.length))).toBeLessThanOrEqual(120);
    // The narrow table names no projects: it asks for none.
    expect(api.requests.map((r) => r.path)).toEqual(['/v1/offers']);
  });

  it('an offer with weekly windows adds a WEEKLY column, "always" for the others', async () => {
    const nights = { ...big, weekly: ['mon-fri 18:00-08:00'], timezone: 'UTC', weekly_summary: 'Mon–Fri 18:00–08:00 (next day) (UTC)' };
    api.on('GET', '/v1/offers', ok({ offers: [nights, old], next: null }));
    const lines = (await cli('offer', 'list')).stdout.split('\n');
    expect(lines[0]).toMatch(/^ID +NODE +MEMORY +CPUS +GPUS +DISK +MAX LEASE +STATUS +WEEKLY +FREE \(UTC\)$/);
    expect(lines[1]).toMatch(/ active +Mon–Fri 18:00–08:00 \(next day\) \(UTC\) +now → open$/);
    expect(lines[2]).toMatch(/ active +always +none$/);
  });

  it('--wide adds the full id, architecture, the window and who may lease, with full times', async () => {
    api.on('GET', '/v1/offers', ok({ offers: [later], next: null }));
    const result = await cli('offer', 'list', '--wide');
    // The allowed projects' names come with the offers: nothing else is asked.
    expect(api.only().path).toBe('/v1/offers');
    expect(result.stdout).toBe(
      [
        'ID                                    NODE                                  ARCH    MEMORY  CPUS  GPUS  DISK    START                     END                       MAX LEASE  ALLOWED      STATUS     FREE',
        `f0f0f0f0-2222-4bbb-8bbb-000000000002  ${NODE_ID}  x86_64  64 GiB  16    1     515 GB  2030-02-01T00:00:00.000Z  2030-03-01T00:00:00.000Z  unlimited  physics-lab  scheduled  2030-02-01T00:00:00.000Z → 2030-03-01T00:00:00.000Z`,
        '',
      ].join('\n'),
    );
  });
});
