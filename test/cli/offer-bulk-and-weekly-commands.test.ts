import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeApi } from './helpers/fake-api.js';
import { runCli } from './helpers/cli-runner.js';
import { NODE_ID, NODE_ID_2, offer, OFFER_ID, project } from './helpers/fixtures.js';

let api: FakeApi;

beforeEach(async () => {
  api = await new FakeApi().start();
});
afterEach(() => api.stop());

const cli = (...argv: string[]) =>
  runCli(argv, { LEASEHOLD_URL: api.url, LEASEHOLD_TOKEN: 'lh_test', LEASEHOLD_CONFIG: '/nonexistent/leasehold.json' });

const weekly = {
  ...offer,
  weekly: ['mon-fri 18:00-08:00', 'sat-sun 00:00-24:00'],
  timezone: 'Europe/Berlin',
  weekly_summary: 'Mon–Fri 18:00–08:00 (next day), Sat–Sun all day (Europe/Berlin)',
  free_windows: [{ start: '2030-01-01T17:00:00.000Z', end: '2030-01-02T07:00:00.000Z' }],
};
const second = { ...weekly, id: 'f0f0f0f0-2222-4bbb-8bbb-000000000002', node_id: NODE_ID_2, node_name: 'gpu-02' };

describe('leasehold offer create for many nodes', () => {
  it('sends several names as a list with the weekly rules (canonical) and timezone, and prints the offers as a table', async () => {
    api.on('POST', '/v1/offers', { status: 201, body: { offers: [weekly, second] } });
    const result = await cli('offer', 'create', 'gpu-01', 'gpu-02', '--weekly', 'Mon-Fri 18:00-08:00', '--weekly', 'sat,sun', '--timezone', 'Europe/Berlin');

    expect(result.code, result.stderr).toBe(0);
    expect(api.only().body).toEqual({ nodes: ['gpu-01', 'gpu-02'], weekly: ['mon-fri 18:00-08:00', 'sat-sun 00:00-24:00'], timezone: 'Europe/Berlin' });
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('Offered 2 nodes:');
    expect(lines[1]).toMatch(/^ID +NODE +START +END +MAX LEASE +ALLOWED +STATUS +WEEKLY +FREE$/);
    expect(lines[2]).toContain(OFFER_ID);
    expect(lines[2]).toContain('Mon–Fri 18:00–08:00 (next day), Sat–Sun all day (Europe/Berlin)');
    expect(lines[3]).toContain('gpu-02');
  });

  it('sends --where as the expression', async () => {
    api.on('POST', '/v1/offers', { status: 201, body: { offers: [offer] } });
    const result = await cli('offer', 'create', '--where', 'gpus >= 1', '--max-lease', '2d');
    expect(result.code, result.stderr).toBe(0);
    expect(api.only().body).toEqual({ where: 'gpus >= 1', max_lease_duration: 'P2D' });
    expect(result.stdout).toMatch(/^Offered 1 node:\n/);
  });

  it('prints why each node could not be offered when the server refuses the batch, and exits 1', async () => {
    api.on('POST', '/v1/offers', {
      status: 409,
      body: {
        error: {
          code: 'conflict',
          message: '2 of 3 nodes cannot be offered; nothing was offered',
          retryable: false,
          details: {
            nodes: [
              { node: 'gpu-09', node_id: null, node_name: null, code: 'not_found', message: 'no node "gpu-09" is known to you' },
              { node: 'gpu-02', node_id: NODE_ID_2, node_name: 'gpu-02', code: 'conflict', message: 'node gpu-02 has an offer in force overlapping this window; withdraw it first' },
            ],
          },
        },
      },
    });
    const result = await cli('offer', 'create', 'gpu-01', 'gpu-02', 'gpu-09');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      [
        'error: 2 of 3 nodes cannot be offered; nothing was offered (conflict, HTTP 409)',
        'NODE    CODE       WHY',
        'gpu-09  not_found  no node "gpu-09" is known to you',
        'gpu-02  conflict   node gpu-02 has an offer in force overlapping this window; withdraw it first',
        '',
      ].join('\n'),
    );
    const json = await cli('--json', 'offer', 'create', 'gpu-01', 'gpu-02', 'gpu-09');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).error.details.nodes).toHaveLength(2);
  });

  it('refuses names with --where, neither, a bad weekly rule or timezone, or a timezone alone, sending nothing (exit 2)', async () => {
    expect(await cli('offer', 'create', 'gpu-01', '--where', 'gpus >= 1')).toMatchObject({ code: 2, stderr: 'error: give node names or --where, not both\n' });
    expect((await cli('offer', 'create')).code).toBe(2);
    const bad = await cli('offer', 'create', 'gpu-01', '--weekly', 'someday 10:00-12:00');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('days are mon, tue');
    expect((await cli('offer', 'create', 'gpu-01', '--weekly', 'mon', '--timezone', 'Mars/Base')).code).toBe(2);
    expect(await cli('offer', 'create', 'gpu-01', '--timezone', 'UTC')).toMatchObject({ code: 2, stderr: 'error: --timezone goes with --weekly\n' });
    expect(api.requests).toHaveLength(0);
  });
});

describe('weekly windows in offer show', () => {
  it('shows the summary and the rules, and a single-node create still prints the offer', async () => {
    api.on('POST', '/v1/offers', { status: 201, body: weekly });
    api.on('GET', '/v1/projects', { status: 200, body: { projects: [project], next: null } });
    const result = await cli('offer', 'create', 'gpu-01', '--weekly', 'mon-fri 18:00-08:00', '--weekly', 'sat-sun', '--timezone', 'Europe/Berlin');
    expect(result.code, result.stderr).toBe(0);
    expect(api.requests[0]?.body).toEqual({ node_id: 'gpu-01', weekly: ['mon-fri 18:00-08:00', 'sat-sun 00:00-24:00'], timezone: 'Europe/Berlin' });
    expect(result.stdout).toContain(`node              gpu-01 (${NODE_ID})`);
    expect(result.stdout).toContain('weekly            Mon–Fri 18:00–08:00 (next day), Sat–Sun all day (Europe/Berlin)\n                  mon-fri 18:00-08:00; sat-sun 00:00-24:00\n');
  });
});
