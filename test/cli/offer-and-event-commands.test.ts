import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiError, FakeApi } from './helpers/fake-api.js';
import { runCli } from './helpers/cli-runner.js';
import { event, LEASE_ID, node, NODE_ID, offer, OFFER_ID, OTHER_PROJECT_ID, project, PROJECT_ID } from './helpers/fixtures.js';

let api: FakeApi;

beforeEach(async () => {
  api = await new FakeApi().start();
});
afterEach(() => api.stop());

const cli = (...argv: string[]) =>
  runCli(argv, { LEASEHOLD_URL: api.url, LEASEHOLD_TOKEN: 'lh_test', LEASEHOLD_CONFIG: '/nonexistent/leasehold.json' });

const ok = (body: unknown) => ({ status: 200, body });

describe('leasehold offer create', () => {
  it('sends the node, times in UTC, ISO durations and the allowed projects', async () => {
    api.on('POST', '/v1/offers', { status: 201, body: offer });
    const result = await cli(
      'offer', 'create', 'gpu-01', '--start', '2030-02-01T00:00:00Z', '--end', '2030-03-01T01:00:00+01:00',
      '--max-lease', '5d', '--min-lease', '90m', '--allow', 'physics-lab', '--allow', OTHER_PROJECT_ID,
    );

    expect(result.code).toBe(0);
    expect(api.requests[0]?.body).toEqual({
      node_id: 'gpu-01',
      start: '2030-02-01T00:00:00.000Z',
      end: '2030-03-01T00:00:00.000Z',
      max_lease_duration: 'P5D',
      min_lease_duration: 'PT1H30M',
      allowed_projects: ['physics-lab', OTHER_PROJECT_ID],
    });
  });

  it('takes a node by the short id the node table prints: the server finds it by prefix, the offer names its id', async () => {
    api.on('GET', '/v1/nodes', (request) => ok({ nodes: request.query.id_prefix === '0b6a5c3e' ? [node] : [], next: null }));
    api.on('POST', '/v1/offers', { status: 201, body: offer });
    const result = await cli('offer', 'create', '0b6a5c3e', '--json');
    expect(result.code, result.stderr).toBe(0);
    // No node is named 0b6a5c3e (404), so the prefix: one short page, then the offer of that node's id.
    expect(api.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/nodes/0b6a5c3e', 'GET /v1/nodes', 'POST /v1/offers']);
    expect(api.requests[1]?.query).toEqual({ id_prefix: '0b6a5c3e', limit: '10' });
    expect(api.requests[2]?.body).toEqual({ node_id: NODE_ID });
  });

  it('sends only the node when no policy is given, and prints the offer', async () => {
    api.on('POST', '/v1/offers', { status: 201, body: offer });
    api.on('GET', '/v1/projects', ok({ projects: [project], next: null }));
    const result = await cli('offer', 'create', 'gpu-01');

    expect(api.requests[0]?.body).toEqual({ node_id: 'gpu-01' });
    expect(result.stdout).toBe(
      [
        'FIELD             VALUE',
        `id                ${OFFER_ID}`,
        `node              gpu-01 (${NODE_ID})`,
        `owner             physics-lab (${PROJECT_ID})`,
        'status            active',
        'start             2029-12-31T00:00:00.000Z',
        'end               open',
        'max lease         P5D',
        'min lease         none',
        'allowed projects  any',
        'reclaim notice    none (never before a lease ends)',
        'price             none',
        'free              now → open',
        'created at        2029-12-31T00:00:00.000Z',
        'withdrawn at      -',
        '',
      ].join('\n'),
    );
  });

  it('refuses bad durations, times, an end before the start and a min above the max (exit 2)', async () => {
    expect((await cli('offer', 'create', 'gpu-01', '--max-lease', 'five days')).code).toBe(2);
    expect((await cli('offer', 'create', 'gpu-01', '--start', '2030-02-30T00:00:00Z')).code).toBe(2);
    expect(await cli('offer', 'create', 'gpu-01', '--start', '2030-02-02T00:00:00Z', '--end', '2030-02-01T00:00:00Z')).toMatchObject({
      code: 2,
      stderr: 'error: --end must be after --start\n',
    });
    expect(await cli('offer', 'create', 'gpu-01', '--max-lease', '1d', '--min-lease', '2d')).toMatchObject({
      code: 2,
      stderr: 'error: --min-lease must not be longer than --max-lease\n',
    });
    expect(api.requests).toHaveLength(0);
  });

  it('an offer of a node you do not own prints the 403 and exits 1', async () => {
    api.on('POST', '/v1/offers', apiError(403, 'forbidden', 'only the owner of gpu-01 can offer it'));
    const result = await cli('offer', 'create', 'gpu-01');
    expect(result).toMatchObject({ code: 1, stderr: 'error: only the owner of gpu-01 can offer it (forbidden, HTTP 403)\n' });
  });
});

describe('leasehold offer list, show, delete', () => {
  const later = {
    ...offer,
    id: 'f0f0f0f0-2222-4bbb-8bbb-000000000002',
    node_name: null,
    node_id: NODE_ID,
    status: 'scheduled',
    start: '2030-02-01T00:00:00.000Z',
    end: '2030-03-01T00:00:00.000Z',
    max_lease_duration: null,
    allowed_projects: [PROJECT_ID, OTHER_PROJECT_ID],
    // The server names the projects it has rows for; an id without one stays an id.
    allowed_project_names: ['physics-lab', null],
    free_windows: [{ start: '2030-02-01T00:00:00.000Z', end: '2030-03-01T00:00:00.000Z' }],
  };
  const booked = { ...offer, id: 'f0f0f0f0-2222-4bbb-8bbb-000000000003', free_windows: [], allowed_projects: [], allowed_project_names: [] };

  it('prints the offers with --wide: open ends, "any" or the allowed projects by the names the server sends, the first free window, dashes for hardware a server does not send', async () => {
    api.on('GET', '/v1/offers', ok({ offers: [offer, later, booked], next: null }));
    const result = await cli('offer', 'list', '--wide');
    // An owner may not list other projects: the names come with the offers, nothing else is asked.
    expect(api.only().path).toBe('/v1/offers');

    expect(result.stdout).toBe(
      [
        'ID                                    NODE                                  ARCH  MEMORY  CPUS  GPUS  DISK  START                     END                       MAX LEASE  ALLOWED                                            STATUS     FREE',
        `${OFFER_ID}  gpu-01                                -     -       -     -     -     2029-12-31T00:00:00.000Z  open                      P5D        any                                                active     now → open`,
        `f0f0f0f0-2222-4bbb-8bbb-000000000002  ${NODE_ID}  -     -       -     -     -     2030-02-01T00:00:00.000Z  2030-03-01T00:00:00.000Z  unlimited  physics-lab, ${OTHER_PROJECT_ID}  scheduled  2030-02-01T00:00:00.000Z → 2030-03-01T00:00:00.000Z`,
        `f0f0f0f0-2222-4bbb-8bbb-000000000003  gpu-01                                -     -       -     -     -     2029-12-31T00:00:00.000Z  open                      P5D        none                                               active     none`,
        '',
      ].join('\n'),
    );
  });

  it('passes the filters as query parameters', async () => {
    api.on('GET', '/v1/offers', ok({ offers: [], next: null }));
    const result = await cli(
      'offer', 'list', '--node', 'gpu-01', '--owner', 'physics-lab', '--status', 'active', '--where', 'gpus >= 1',
      '--free-from', '2030-02-01T00:00:00Z', '--free-to', '2030-02-04T00:00:00Z',
    );
    expect(api.only().query).toEqual({
      node_id: 'gpu-01',
      owner: 'physics-lab',
      status: 'active',
      where: 'gpus >= 1',
      free_from: '2030-02-01T00:00:00.000Z',
      free_to: '2030-02-04T00:00:00.000Z',
    });
    expect(result.stderr).toBe('no offers found\n');
  });

  it('refuses an unknown --status or a --free-to before --free-from (exit 2)', async () => {
    expect((await cli('offer', 'list', '--status', 'open')).code).toBe(2);
    expect((await cli('offer', 'list', '--free-from', '2030-02-04T00:00:00Z', '--free-to', '2030-02-01T00:00:00Z')).code).toBe(2);
    expect(api.requests).toHaveLength(0);
  });

  it('--all follows the next links and --json prints the server shape', async () => {
    api.on('GET', '/v1/offers', (request) =>
      request.query.marker === undefined
        ? ok({ offers: [offer], next: `/v1/offers?status=active&marker=${OFFER_ID}` })
        : ok({ offers: [later], next: null }),
    );
    const result = await cli('offer', 'list', '--status', 'active', '--all', '--json');
    expect(api.requests.map((r) => r.query)).toEqual([{ status: 'active' }, { status: 'active', marker: OFFER_ID }]);
    expect(JSON.parse(result.stdout)).toEqual({ offers: [offer, later], next: null });
  });

  it('show lists every free window', async () => {
    const gappy = {
      ...later,
      free_windows: [
        { start: '2030-02-01T00:00:00.000Z', end: '2030-02-10T00:00:00.000Z' },
        { start: '2030-02-12T00:00:00.000Z', end: '2030-03-01T00:00:00.000Z' },
      ],
    };
    api.on('GET', `/v1/offers/${later.id}`, ok(gappy));
    const result = await cli('offer', 'show', later.id);
    expect(result.stdout).toContain(`owner             physics-lab (${PROJECT_ID})\n`);
    expect(result.stdout).toContain(
      'free              2030-02-01T00:00:00.000Z → 2030-02-10T00:00:00.000Z\n                  2030-02-12T00:00:00.000Z → 2030-03-01T00:00:00.000Z\n',
    );
    expect(result.stdout).toContain(`allowed projects  physics-lab, ${OTHER_PROJECT_ID}\n`);
  });

  it('show --json prints the offer without looking up names', async () => {
    api.on('GET', `/v1/offers/${OFFER_ID}`, ok(offer));
    expect(JSON.parse((await cli('offer', 'show', OFFER_ID, '--json')).stdout)).toEqual(offer);
    expect(api.requests).toHaveLength(1);
  });

  it('delete withdraws the offer and says leases stay', async () => {
    api.on('DELETE', `/v1/offers/${OFFER_ID}`, { status: 204 });
    const result = await cli('offer', 'delete', OFFER_ID);
    expect(api.only().method).toBe('DELETE');
    expect(result).toEqual({ code: 0, stdout: `Withdrew offer ${OFFER_ID} (leases already made from it stay)\n`, stderr: '' });
    expect((await cli('offer', 'delete', OFFER_ID, '--json')).stdout).toBe('');
  });
});

describe('leasehold event list', () => {
  it('prints the events with node and project names, the short lease id, and messages with names for ids', async () => {
    const engine = {
      ...event,
      seq: 43,
      type: 'allocation.clean',
      outcome: 'error',
      actor: 'engine',
      lease_id: null,
      message: `cleaning node ${NODE_ID} failed:\nBMC timeout`,
      display_message: 'cleaning node gpu-01 failed:\nBMC timeout',
    };
    // A node without a name, and a project without a row: their short ids.
    const unnamed = { ...event, seq: 44, node_name: null, project_id: OTHER_PROJECT_ID, project_name: null, lease_id: null };
    api.on('GET', '/v1/events', ok({ events: [event, engine, unnamed], next: null }));
    const result = await cli('event', 'list');

    expect(result.stdout).toBe(
      [
        'AT                        TYPE              OUTCOME  ACTOR   NODE      PROJECT      LEASE     MESSAGE',
        '2030-01-01T00:00:05.000Z  node.power        ok       alice   gpu-01    physics-lab  a1b2c3d4  power on',
        '2030-01-01T00:00:05.000Z  allocation.clean  error    engine  gpu-01    physics-lab  -         cleaning node gpu-01 failed: BMC timeout',
        '2030-01-01T00:00:05.000Z  node.power        ok       alice   0b6a5c3e  9e8d7c6b     -         power on',
        '',
      ].join('\n'),
    );
    // --json keeps the message as recorded beside it.
    expect(JSON.parse((await cli('event', 'list', '--json')).stdout).events[1]).toMatchObject({ message: engine.message, display_message: engine.display_message });
  });

  it('passes the filters, times in UTC, and pages with --marker', async () => {
    api.on('GET', '/v1/events', ok({ events: [event], next: '/v1/events?marker=42' }));
    const result = await cli(
      'event', 'list', '--node', 'gpu-01', '--lease', LEASE_ID, '--project', 'physics-lab', '--type', 'node.power',
      '--since', '2030-01-01T01:00:00+01:00', '--until', '2030-01-02T00:00:00Z', '--marker', '41',
    );
    expect(api.only().query).toEqual({
      node_id: 'gpu-01',
      lease_id: LEASE_ID,
      project: 'physics-lab',
      type: 'node.power',
      since: '2030-01-01T00:00:00.000Z',
      until: '2030-01-02T00:00:00.000Z',
      marker: '41',
    });
    expect(result.stderr).toBe('more: --all or --marker 42\n');
  });

  it('refuses a bad --since or an --until before --since (exit 2)', async () => {
    expect((await cli('event', 'list', '--since', 'yesterday')).code).toBe(2);
    expect((await cli('event', 'list', '--since', '2030-01-02T00:00:00Z', '--until', '2030-01-01T00:00:00Z')).code).toBe(2);
    expect(api.requests).toHaveLength(0);
  });
});
