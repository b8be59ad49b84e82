import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeApi } from './helpers/fake-api.js';
import { runCli } from './helpers/cli-runner.js';
import { offer, OTHER_PROJECT_ID, project, PROJECT_ID, usage } from './helpers/fixtures.js';

let api: FakeApi;

beforeEach(async () => {
  api = await new FakeApi().start();
});
afterEach(() => api.stop());

const cli = (...argv: string[]) =>
  runCli(argv, { LEASEHOLD_URL: api.url, LEASEHOLD_TOKEN: 'lh_test', LEASEHOLD_CONFIG: '/nonexistent/leasehold.json' });

describe('leasehold usage', () => {
  it('asks for the window and grouping (resource-class as the API spells it) and prints node-hours with charges per currency', async () => {
    api.on('GET', '/v1/usage', { status: 200, body: usage });
    const result = await cli('usage', '--from', '2030-01-01T00:00:00Z', '--to', '2030-02-01T01:00:00+01:00', '--by', 'resource-class', '--owner', 'physics-lab');
    expect(result.code, result.stderr).toBe(0);
    expect(api.requests[0]?.query).toEqual({ from: '2030-01-01T00:00:00.000Z', to: '2030-02-01T00:00:00.000Z', group_by: 'resource_class', owner: 'physics-lab' });
    expect(result.stdout).toBe(
      [
        'PROJECT      NODE-HOURS  ALLOCATIONS  CHARGES',
        'physics-lab  10.00       3            12.50 EUR, 3.00 USD',
        'chem-lab     1.50        1            -',
        'TOTAL        11.50       4            12.50 EUR, 3.00 USD',
        'from 2030-01-01T00:00:00.000Z to 2030-02-01T00:00:00.000Z (as of 2030-01-20T00:00:00.000Z)',
        '',
      ].join('\n'),
    );
  });

  it('--csv prints one line per group and currency', async () => {
    api.on('GET', '/v1/usage', { status: 200, body: usage });
    const result = await cli('usage', '--csv');
    expect(api.requests[0]?.query).toEqual({ group_by: 'project' });
    expect(result.stdout).toBe(
      [
        'group_by,key,name,node_hours,node_seconds,allocations,currency,charge',
        `project,${PROJECT_ID},physics-lab,10,36000,3,EUR,12.50`,
        `project,${PROJECT_ID},physics-lab,10,36000,3,USD,3.00`,
        `project,${OTHER_PROJECT_ID},chem-lab,1.5,5400,1,,`,
        '',
      ].join('\n'),
    );
  });

  it('refuses an unknown grouping and a window that ends before it starts, without asking the server', async () => {
    expect((await cli('usage', '--by', 'lessee')).code).toBe(2);
    expect((await cli('usage', '--from', '2030-02-01T00:00:00Z', '--to', '2030-01-01T00:00:00Z')).code).toBe(2);
    expect(api.requests).toEqual([]);
  });
});

describe('prices and budgets', () => {
  it('offer create --price --currency sends the price as written and the code in capitals', async () => {
    api.on('POST', '/v1/offers', { status: 201, body: { ...offer, price_per_node_hour: '2.50', currency: 'EUR' } });
    api.on('GET', '/v1/projects', { status: 200, body: { projects: [project], next: null } });
    const result = await cli('offer', 'create', 'gpu-01', '--price', '2.50', '--currency', 'eur');
    expect(result.code, result.stderr).toBe(0);
    expect(api.requests[0]?.body).toEqual({ node_id: 'gpu-01', price_per_node_hour: '2.50', currency: 'EUR' });
    expect(result.stdout).toContain('price             2.50 EUR per node-hour');
  });

  it('offer create refuses a price without a currency and a malformed price', async () => {
    expect((await cli('offer', 'create', 'gpu-01', '--price', '2.50')).code).toBe(2);
    expect((await cli('offer', 'create', 'gpu-01', '--price', '2,50', '--currency', 'EUR')).code).toBe(2);
    expect(api.requests).toEqual([]);
  });

  it('project set --max-node-hours sets the monthly budget, and none removes it', async () => {
    api.on('PATCH', `/v1/projects/physics-lab`, { status: 200, body: { ...project, quota: { ...project.quota, max_node_hours: 2000 } } });
    const result = await cli('project', 'set', 'physics-lab', '--max-node-hours', '2000');
    expect(result.code, result.stderr).toBe(0);
    expect(api.requests[0]?.body).toEqual({ quota: { max_node_hours: 2000 } });
    expect(result.stdout).toContain('max node-hours/month  2000');
    await cli('project', 'set', 'physics-lab', '--max-node-hours', 'none');
    expect(api.requests[1]?.body).toEqual({ quota: { max_node_hours: null } });
  });
});
