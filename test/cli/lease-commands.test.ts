import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiError, FakeApi, type RecordedRequest, type Reply } from './helpers/fake-api.js';
import { fakeClock, runCli, type RunOptions } from './helpers/cli-runner.js';
import { lease, LEASE_ID, leaseIn, NODE_ID, OTHER_PROJECT_ID, PROJECT_ID } from './helpers/fixtures.js';

let api: FakeApi;

beforeEach(async () => {
  api = await new FakeApi().start();
});
afterEach(() => api.stop());

const env = () => ({ LEASEHOLD_URL: api.url, LEASEHOLD_TOKEN: 'lh_test', LEASEHOLD_CONFIG: '/nonexistent/leasehold.json' });
const cli = (...argv: string[]) => runCli(argv, env());
const cliWith = (options: RunOptions, ...argv: string[]) => runCli(argv, env(), options);

const SEED = ['--need', '3:memory >= 48GiB and gpus >= 1', '--need', '1:memory >= 16GiB and disk >= 1TB', '--for', '3d'];
const SEED_BODY = {
  groups: [
    { count: 3, where: 'memory >= 48GiB and gpus >= 1' },
    { count: 1, where: 'memory >= 16GiB and disk >= 1TB' },
  ],
  duration: 'P3D',
};

const LEASE_VIEW = [
  'FIELD       VALUE',
  `id          ${LEASE_ID}`,
  'name        training',
  `project     physics-lab (${PROJECT_ID})`,
  'state       pending',
  'start       2030-01-01T00:00:00.000Z',
  'end         2030-01-04T00:00:00.000Z',
  'duration    P3D',
  'request     group 1: 3 × memory >= 48GiB and gpus >= 1',
  '            group 2: 1 × memory >= 16GiB and disk >= 1TB',
  'replace     auto: a failed node is replaced at once',
  'notices     P1D before: due 2030-01-03T00:00:00.000Z',
  '            PT1H before: due 2030-01-03T23:00:00.000Z',
  'created at  2030-01-01T00:00:00.000Z',
  'updated at  2030-01-01T00:00:00.000Z',
  '',
  'NODE     GROUP  STATE',
  'gpu-01   1      reserved',
  'gpu-02   1      reserved',
  'gpu-03   1      reserved',
  'disk-01  2      reserved',
  '',
].join('\n');

/** Answers the replies in turn, then keeps answering the last one. */
function inTurn(...replies: Reply[]): (request: RecordedRequest) => Reply {
  let i = 0;
  return () => replies[Math.min(i++, replies.length - 1)] as Reply;
}

const ok = (body: unknown): Reply => ({ status: 200, body });

const UNAVAILABLE = apiError(
  409,
  'lease_unavailable',
  'the request cannot be met from 2030-01-01T00:00:00.000Z: group 1 (3 × memory >= 48GiB and gpus >= 1): 5 match, 2 allowed, 2 free — short by 1; earliest start: 2030-01-02T06:00:00.000Z',
  {
    earliest_start: '2030-01-02T06:00:00.000Z',
    groups: [{ group: 0, count: 3, where: 'memory >= 48GiB and gpus >= 1', matching: 5, free: 2, allowed: 2, reasons: ['gpu-04: leased until 2030-01-02T06:00:00Z'] }],
  },
);

describe('leasehold lease create', () => {
  it('sends the seed request as groups and an ISO duration, and prints the lease and its allocations', async () => {
    api.on('POST', '/v1/leases', { status: 201, body: lease });
    const result = await cli('lease', 'create', ...SEED);

    expect(api.only().body).toEqual(SEED_BODY);
    expect(result).toEqual({ code: 0, stdout: LEASE_VIEW, stderr: '' });
  });

  it('sends named nodes, a name, a start and an end as given, times in UTC', async () => {
    api.on('POST', '/v1/leases', { status: 201, body: lease });
    await cli(
      'lease', 'create', '--name', 'demo', '--node', 'gpu-01', '--node', NODE_ID,
      '--start', '2030-02-01T10:00:00+01:00', '--end', '2030-02-03T18:00:00Z',
    );
    expect(api.only().body).toEqual({
      name: 'demo',
      nodes: ['gpu-01', NODE_ID],
      start: '2030-02-01T09:00:00.000Z',
      end: '2030-02-03T18:00:00.000Z',
    });
  });

  it('converts a short or ISO --for to ISO 8601', async () => {
    api.on('POST', '/v1/leases', { status: 201, body: lease });
    await cli('lease', 'create', '--need', '1:gpus >= 1', '--for', '36h');
    await cli('lease', 'create', '--need', '1:gpus >= 1', '--for', 'PT90M');
    expect(api.requests.map((r) => (r.body as { duration: string }).duration)).toEqual(['P1DT12H', 'PT1H30M']);
  });

  it('--json prints the created lease as the server sent it', async () => {
    api.on('POST', '/v1/leases', { status: 201, body: lease });
    const result = await cli('lease', 'create', ...SEED, '--json');
    expect(JSON.parse(result.stdout)).toEqual(lease);
  });

  it('on 409 prints the server explanation and the earliest start to retry with, and exits 1', async () => {
    api.on('POST', '/v1/leases', UNAVAILABLE);
    const result = await cli('lease', 'create', ...SEED);

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      [
        'error: the request cannot be met from 2030-01-01T00:00:00.000Z: group 1 (3 × memory >= 48GiB and gpus >= 1): 5 match, 2 allowed, 2 free — short by 1; earliest start: 2030-01-02T06:00:00.000Z (lease_unavailable, HTTP 409)',
        'earliest start: 2030-01-02T06:00:00.000Z (try --start 2030-01-02T06:00:00.000Z)',
        '',
      ].join('\n'),
    );
  });

  it('on 409 without an earliest start prints only the explanation', async () => {
    api.on('POST', '/v1/leases', apiError(409, 'policy_violation', 'physics-lab may lease at most 5 days', { earliest_start: null, groups: [] }));
    const result = await cli('lease', 'create', ...SEED);
    expect(result).toMatchObject({ code: 1, stderr: 'error: physics-lab may lease at most 5 days (policy_violation, HTTP 409)\n' });
  });

  it('on 409 with --json also prints the details as JSON', async () => {
    api.on('POST', '/v1/leases', UNAVAILABLE);
    const result = await cli('lease', 'create', ...SEED, '--json');
    const details = result.stderr.split('\n').find((line) => line.startsWith('details: '));
    expect(JSON.parse(details?.slice('details: '.length) ?? 'null')).toMatchObject({ earliest_start: '2030-01-02T06:00:00.000Z' });
  });

  it('other API errors are reported as usual', async () => {
    api.on('POST', '/v1/leases', apiError(400, 'invalid_expression', 'unknown fact "gpu"; known: memory, disk, cpus, gpus'));
    const result = await cli('lease', 'create', '--need', '1:gpu >= 1', '--for', '1d');
    expect(result).toMatchObject({ code: 1, stderr: 'error: unknown fact "gpu"; known: memory, disk, cpus, gpus (invalid_expression, HTTP 400)\n' });
  });

  it.each([
    ['no colon', 'gpus >= 1', 'the count and the colon are missing'],
    ['a zero count', '0:gpus >= 1', 'the count must be a whole number from 1'],
    ['a negative count', '-2:gpus >= 1', 'the count must be a whole number from 1'],
    ['a word for the count', 'three:gpus >= 1', 'the count must be a whole number from 1'],
    ['a fraction', '1.5:gpus >= 1', 'the count must be a whole number from 1'],
    ['no expression', '3:  ', 'the expression after the colon is empty'],
  ])('refuses a --need with %s (exit 2, nothing sent)', async (_, need, why) => {
    const result = await cli('lease', 'create', '--need', need, '--for', '1d');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("option '--need <count:expression>' argument");
    expect(result.stderr).toContain("Use COUNT:EXPRESSION, e.g. '3:memory >= 48GiB and gpus >= 1'");
    expect(result.stderr).toContain(why);
    expect(api.requests).toHaveLength(0);
  });

  it('keeps the colons of the expression after the first one', async () => {
    api.on('POST', '/v1/leases', { status: 201, body: lease });
    await cli('lease', 'create', '--need', '2:has CUSTOM_A:B', '--for', '1d');
    expect(api.only().body).toMatchObject({ groups: [{ count: 2, where: 'has CUSTOM_A:B' }] });
  });

  it('refuses --for together with --end (exit 2)', async () => {
    const result = await cli('lease', 'create', '--need', '1:gpus >= 1', '--for', '3d', '--end', '2030-01-04T00:00:00Z');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("option '--for <duration>' cannot be used with option '--end <time>'");
    expect(api.requests).toHaveLength(0);
  });

  it.each([
    ['neither --for nor --end', ['--need', '1:gpus >= 1'], 'error: say for how long: --for 3d or --end <time>\n'],
    ['neither --need nor --node', ['--for', '3d'], "error: say what to lease: --need 'COUNT:EXPRESSION' (e.g. --need '3:gpus >= 1') and/or --node <node>\n"],
    ['an end before the start', ['--node', 'gpu-01', '--start', '2030-01-05T00:00:00Z', '--end', '2030-01-04T00:00:00Z'], 'error: --end must be after --start\n'],
    ['--wait-timeout without --wait', [...SEED, '--wait-timeout', '5m'], 'error: --wait-timeout goes with --wait\n'],
  ])('refuses %s (exit 2)', async (_, args, stderr) => {
    const result = await cli('lease', 'create', ...args);
    expect(result).toEqual({ code: 2, stdout: '', stderr });
    expect(api.requests).toHaveLength(0);
  });

  it('refuses a bad --for, --start or --wait-timeout (exit 2)', async () => {
    expect((await cli('lease', 'create', '--node', 'a', '--for', '3 days')).code).toBe(2);
    expect((await cli('lease', 'create', '--node', 'a', '--for', '0s')).code).toBe(2);
    expect((await cli('lease', 'create', '--node', 'a', '--for', '1d', '--start', 'tomorrow')).code).toBe(2);
    expect((await cli('lease', 'create', '--node', 'a', '--for', '1d', '--wait', '--wait-timeout', 'soon')).code).toBe(2);
    expect(api.requests).toHaveLength(0);
  });
});

describe('leasehold lease create --wait', () => {
  it('polls every second, prints each allocation state change, and exits 0 once the lease is active', async () => {
    const starting = leaseIn('pending', 'reserved');
    starting.allocations[0] = { ...starting.allocations[0]!, state: 'starting' };
    api.on('POST', '/v1/leases', { status: 201, body: lease });
    api.on('GET', `/v1/leases/${LEASE_ID}`, inTurn(ok(lease), ok(starting), ok(leaseIn('active', 'active'))));
    const clock = fakeClock();
    const result = await cliWith(clock, 'lease', 'create', ...SEED, '--wait');

    expect(result.code).toBe(0);
    expect(result.stdout).toBe(LEASE_VIEW);
    expect(result.stderr).toBe(
      [
        `waiting for lease ${LEASE_ID} to become active`,
        'gpu-01 (group 1): reserved -> starting',
        'gpu-01 (group 1): starting -> active',
        'gpu-02 (group 1): reserved -> active',
        'gpu-03 (group 1): reserved -> active',
        'disk-01 (group 2): reserved -> active',
        `lease ${LEASE_ID}: pending -> active`,
        `lease ${LEASE_ID} is active: gpu-01, gpu-02, gpu-03, disk-01`,
        '',
      ].join('\n'),
    );
    expect(clock.sleeps).toEqual([1000, 1000, 1000]);
    expect(api.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /v1/leases',
      ...Array(3).fill(`GET /v1/leases/${LEASE_ID}`),
    ]);
  });

  it('does not poll when the lease is already active', async () => {
    api.on('POST', '/v1/leases', { status: 201, body: leaseIn('active', 'active') });
    const clock = fakeClock();
    const result = await cliWith(clock, 'lease', 'create', ...SEED, '--wait');
    expect(result.code).toBe(0);
    expect(clock.sleeps).toEqual([]);
    expect(result.stderr).toBe(`lease ${LEASE_ID} is active: gpu-01, gpu-02, gpu-03, disk-01\n`);
  });

  it('shows the step and error of a failing allocation and exits 1 when the lease fails', async () => {
    const failed = leaseIn('failed', 'reserved');
    failed.allocations[3] = { ...failed.allocations[3]!, state: 'releasing', step: 'clean', last_error: 'BMC timeout' } as never;
    api.on('POST', '/v1/leases', { status: 201, body: lease });
    api.on('GET', `/v1/leases/${LEASE_ID}`, ok(failed));
    const result = await cliWith(fakeClock(), 'lease', 'create', ...SEED, '--wait');

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('disk-01 (group 2): reserved -> releasing (clean): BMC timeout\n');
    expect(result.stderr).toContain(`lease ${LEASE_ID}: pending -> failed\n`);
    expect(result.stderr).toContain(
      `error: lease ${LEASE_ID} failed before it became active; see \`leasehold lease show ${LEASE_ID}\` and \`leasehold event list --lease ${LEASE_ID}\`\n`,
    );
  });

  it('exits 1 when the lease is cancelled while waiting', async () => {
    api.on('POST', '/v1/leases', { status: 201, body: lease });
    api.on('GET', `/v1/leases/${LEASE_ID}`, ok(leaseIn('cancelled', 'cancelled')));
    const result = await cliWith(fakeClock(), 'lease', 'create', ...SEED, '--wait');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error: lease ${LEASE_ID} was cancelled before it became active`);
  });

  it('gives up after --wait-timeout with exit 1, saying the lease carries on', async () => {
    api.on('POST', '/v1/leases', { status: 201, body: lease });
    api.on('GET', `/v1/leases/${LEASE_ID}`, ok(lease));
    const clock = fakeClock();
    const result = await cliWith(clock, 'lease', 'create', ...SEED, '--wait', '--wait-timeout', '5s');

    expect(result.code).toBe(1);
    expect(clock.sleeps).toEqual([1000, 1000, 1000, 1000, 1000]);
    expect(result.stderr).toContain(`error: gave up waiting after 5s: lease ${LEASE_ID} is still pending (it carries on;`);
  });

  it('gives up after 10 minutes by default', async () => {
    api.on('POST', '/v1/leases', { status: 201, body: lease });
    api.on('GET', `/v1/leases/${LEASE_ID}`, ok(lease));
    const clock = fakeClock();
    const result = await cliWith(clock, 'lease', 'create', ...SEED, '--wait');
    expect(result.code).toBe(1);
    expect(clock.sleeps.reduce((a, b) => a + b, 0)).toBe(600_000);
    expect(result.stderr).toContain('gave up waiting after 10m');
  });

  it('for a future start says it waits for the start time, polls less often until then, and times out from the start', async () => {
    const future = { ...lease, start: '2030-01-01T00:01:00.000Z', end: '2030-01-04T00:01:00.000Z' };
    api.on('POST', '/v1/leases', { status: 201, body: future });
    api.on('GET', `/v1/leases/${LEASE_ID}`, ok(future));
    const clock = fakeClock();
    const result = await cliWith(clock, 'lease', 'create', ...SEED, '--start', '2030-01-01T00:01:00Z', '--wait', '--wait-timeout', '2s');

    expect(result.stderr.split('\n')[0]).toBe(`lease ${LEASE_ID} starts at 2030-01-01T00:01:00.000Z: waiting for the start time`);
    // 60 s to the start in pauses of at most 30 s, then 2 s of one-second polls.
    expect(clock.sleeps).toEqual([30_000, 30_000, 1000, 1000]);
    expect(result.code).toBe(1);
  });

  it('--json prints only the final lease, so stdout stays one JSON document', async () => {
    const active = leaseIn('active', 'active');
    api.on('POST', '/v1/leases', { status: 201, body: lease });
    api.on('GET', `/v1/leases/${LEASE_ID}`, ok(active));
    const result = await cliWith(fakeClock(), 'lease', 'create', ...SEED, '--wait', '--json');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(active);
  });
});

describe('leasehold lease quote', () => {
  const quote = {
    start: '2030-01-01T00:00:00.000Z',
    end: '2030-01-04T00:00:00.000Z',
    duration: 'P3D',
    allocations: [
      { node_id: NODE_ID, node_name: 'gpu-01', group: 0, group_number: 1 },
      { node_id: 'x', node_name: null, group: 1, group_number: 2 },
    ],
  };

  it('sends the same body as create and prints the would-be allocations, groups numbered from 1', async () => {
    api.on('POST', '/v1/leases/quote', ok(quote));
    const result = await cli('lease', 'quote', ...SEED);

    expect(api.only().body).toEqual(SEED_BODY);
    expect(result.stdout).toBe(
      [
        'FIELD     VALUE',
        'start     2030-01-01T00:00:00.000Z',
        'end       2030-01-04T00:00:00.000Z',
        'duration  P3D',
        '',
        'NODE    GROUP',
        'gpu-01  1',
        'x       2',
        '',
      ].join('\n'),
    );
  });

  it('on 409 prints the explanation and earliest start and exits 1', async () => {
    api.on('POST', '/v1/leases/quote', UNAVAILABLE);
    const result = await cli('lease', 'quote', ...SEED);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('earliest start: 2030-01-02T06:00:00.000Z (try --start 2030-01-02T06:00:00.000Z)\n');
  });

  it('has no --wait', async () => {
    const result = await cli('lease', 'quote', ...SEED, '--wait');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown option '--wait'");
  });
});

describe('leasehold lease list, show', () => {
  it('lists leases with the project names the server sends and node counts, asking for nothing else', async () => {
    const other = { ...lease, id: 'b0000000-0000-4000-8000-000000000000', name: 'other', project_id: OTHER_PROJECT_ID, project_name: 'chem-lab', state: 'active', allocations: [] };
    api.on('GET', '/v1/leases', ok({ leases: [lease, other], next: null }));
    const result = await cli('lease', 'list');

    expect(result.stdout).toBe(
      [
        'ID                                    NAME      PROJECT      STATE    START                     END                       ENDS IN  NODES',
        `${LEASE_ID}  training  physics-lab  pending  2030-01-01T00:00:00.000Z  2030-01-04T00:00:00.000Z  3d       4`,
        'b0000000-0000-4000-8000-000000000000  other     chem-lab     active   2030-01-01T00:00:00.000Z  2030-01-04T00:00:00.000Z  3d       0',
        '',
      ].join('\n'),
    );
    expect(api.requests.map((r) => r.path)).toEqual(['/v1/leases']);
  });

  it('passes the filters and pages with --all', async () => {
    api.on('GET', '/v1/leases', (request) =>
      request.query.marker === undefined
        ? ok({ leases: [lease], next: `/v1/leases?state=active&marker=${LEASE_ID}` })
        : ok({ leases: [], next: null }),
    );
    await cli('lease', 'list', '--project', 'physics-lab', '--state', 'active', '--node', 'gpu-01', '--all', '--json');
    expect(api.requests.map((r) => r.query)).toEqual([
      { project: 'physics-lab', state: 'active', node_id: 'gpu-01', order: 'newest' },
      { state: 'active', marker: LEASE_ID },
    ]);
  });

  it('refuses an unknown --state (exit 2)', async () => {
    expect((await cli('lease', 'list', '--state', 'running')).code).toBe(2);
  });

  it('show prints the lease and its allocations, with the errors column only when there is an error', async () => {
    api.on('GET', `/v1/leases/${LEASE_ID}`, ok(lease));
    // `show` also says how long until the end, from the CLI's clock (2030-01-01T00:00Z here).
    expect((await cli('lease', 'show', LEASE_ID)).stdout).toBe(LEASE_VIEW.replace('notices ', 'ends in     3d\nnotices '));

    const troubled = { ...lease, request: { nodes: ['gpu-01'] }, allocations: [{ ...lease.allocations[0]!, state: 'quarantined', last_error: 'clean failed' }] };
    api.on('GET', `/v1/leases/${LEASE_ID}`, ok(troubled));
    const result = await cli('lease', 'show', LEASE_ID);
    expect(result.stdout).toContain('request     nodes: gpu-01\n');
    expect(result.stdout).toContain('NODE    GROUP  STATE        LAST ERROR\ngpu-01  1      quarantined  clean failed\n');
  });
});

describe('leasehold lease extend, cancel', () => {
  it('extend --by reads the lease and sends its end plus the duration', async () => {
    api.on('GET', `/v1/leases/${LEASE_ID}`, ok(lease));
    api.on('PATCH', `/v1/leases/${LEASE_ID}`, ok({ ...lease, end: '2030-01-05T12:00:00.000Z' }));
    const result = await cli('lease', 'extend', LEASE_ID, '--by', '1d12h');

    expect(result.code).toBe(0);
    expect(api.requests.map((r) => [r.method, r.body])).toEqual([
      ['GET', undefined],
      ['PATCH', { end: '2030-01-05T12:00:00.000Z' }],
    ]);
    expect(result.stdout).toContain('end         2030-01-05T12:00:00.000Z\n');
    expect(result.stdout).toContain('duration    P4DT12H\n');
  });

  it('extend --end sends that end without reading the lease', async () => {
    api.on('PATCH', `/v1/leases/${LEASE_ID}`, ok(lease));
    await cli('lease', 'extend', LEASE_ID, '--end', '2030-01-06T00:00:00+02:00');
    expect(api.only().body).toEqual({ end: '2030-01-05T22:00:00.000Z' });
  });

  it('extend needs exactly one of --end and --by (exit 2)', async () => {
    expect(await cli('lease', 'extend', LEASE_ID)).toMatchObject({ code: 2, stderr: 'error: give the new end: --end <time> or --by <duration>\n' });
    expect((await cli('lease', 'extend', LEASE_ID, '--by', '1d', '--end', '2030-01-06T00:00:00Z')).code).toBe(2);
    expect((await cli('lease', 'extend', LEASE_ID, '--by', '-1d')).code).toBe(2);
    expect(api.requests).toHaveLength(0);
  });

  it('extend refused by policy prints the server error and exits 1', async () => {
    api.on('GET', `/v1/leases/${LEASE_ID}`, ok(lease));
    api.on('PATCH', `/v1/leases/${LEASE_ID}`, apiError(409, 'policy_violation', 'the offer on gpu-01 allows at most P5D'));
    const result = await cli('lease', 'extend', LEASE_ID, '--by', '3d');
    expect(result).toMatchObject({ code: 1, stderr: 'error: the offer on gpu-01 allows at most P5D (policy_violation, HTTP 409)\n' });
  });

  it('cancel deletes the lease and prints it as the server returns it', async () => {
    api.on('DELETE', `/v1/leases/${LEASE_ID}`, ok(leaseIn('cancelled', 'cancelled')));
    const result = await cli('lease', 'cancel', LEASE_ID);
    expect(api.only().method).toBe('DELETE');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('state       cancelled\n');
    expect(result.stderr).toBe('');
  });

  it('cancel of a started lease says the nodes are being released', async () => {
    api.on('DELETE', `/v1/leases/${LEASE_ID}`, ok(leaseIn('ending', 'releasing')));
    const result = await cli('lease', 'cancel', LEASE_ID);
    expect(result.stderr).toBe(`lease ${LEASE_ID} is ending: its nodes are being released and cleaned\n`);
    expect(JSON.parse((await cli('lease', 'cancel', LEASE_ID, '--json')).stdout)).toEqual(leaseIn('ending', 'releasing'));
  });
});
