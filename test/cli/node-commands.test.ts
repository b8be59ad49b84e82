import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiError, FakeApi } from './helpers/fake-api.js';
import { fakeClock, runCli } from './helpers/cli-runner.js';
import { LEASE_ID, node, NODE_ID, NODE_ID_2, node2, PROJECT_ID } from './helpers/fixtures.js';

let api: FakeApi;

beforeEach(async () => {
  api = await new FakeApi().start();
});
afterEach(() => api.stop());

const ENV = () => ({ LEASEHOLD_URL: api.url, LEASEHOLD_TOKEN: 'lh_test', LEASEHOLD_CONFIG: '/nonexistent/leasehold.json' });
const cli = (...argv: string[]) => runCli(argv, ENV());

describe('leasehold node list', () => {
  it('fits 120 columns by default: names, owners, human sizes, the short id and on/off', async () => {
    api.on('GET', '/v1/nodes', { status: 200, body: { nodes: [node, node2], next: null } });
    const result = await cli('node', 'list');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        'NAME    ID        OWNER        MEMORY  CPUS  GPUS  DISK     POWER  PROVISION STATE  MAINT  LEASE',
        `gpu-01  ${NODE_ID.slice(0, 8)}  physics-lab  64 GiB  32    1     515 GB   off    available        no     -`,
        `old-01  ${NODE_ID_2.slice(0, 8)}  legacy-team  8 GiB   4     0     2.14 TB  off    available        yes    -`,
        '',
      ].join('\n'),
    );
    expect(Math.max(...result.stdout.split('\n').map((l) => l.length))).toBeLessThanOrEqual(120);
  });

  it('--wide prints every column: the full id, resource class and architecture', async () => {
    api.on('GET', '/v1/nodes', { status: 200, body: { nodes: [node, node2], next: null } });
    const result = await cli('node', 'list', '--wide');

    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        'NAME    ID                                    OWNER        RESOURCE CLASS     MEMORY  CPUS  GPUS  DISK     ARCH     POWER      PROVISION STATE  MAINT  LEASE',
        `gpu-01  ${NODE_ID}  physics-lab  baremetal.gpu      64 GiB  32    1     515 GB   x86_64   power off  available        no     -`,
        `old-01  ${NODE_ID_2}  legacy-team  baremetal.compute  8 GiB   4     0     2.14 TB  aarch64  power off  available        yes    -`,
        '',
      ].join('\n'),
    );
    expect(result.stderr).toBe('');
  });

  it('says "quarantined" in MAINT and shows the current lease by its short id', async () => {
    const leased = { ...node, lease: { id: LEASE_ID, project_id: PROJECT_ID, end: '2030-01-04T00:00:00.000Z' } };
    const quarantined = { ...node2, quarantined: true, quarantine_reason: 'cleaning failed' };
    api.on('GET', '/v1/nodes', { status: 200, body: { nodes: [leased, quarantined], next: null } });
    const [, first, second] = (await cli('node', 'list')).stdout.split('\n');

    expect(first).toMatch(/ no +a1b2c3d4$/);
    expect(second).toMatch(/ quarantined {2}-$/);
  });

  it('passes the filters as query parameters', async () => {
    api.on('GET', '/v1/nodes', { status: 200, body: { nodes: [], next: null } });
    const result = await cli(
      'node', 'list', '--owner', 'physics-lab', '--resource-class', 'baremetal.gpu', '--provision-state', 'available',
      '--power-state', 'power on', '--maintenance', 'false', '--limit', '50',
    );

    expect(api.only().query).toEqual({
      owner: 'physics-lab',
      resource_class: 'baremetal.gpu',
      provision_state: 'available',
      power_state: 'power on',
      maintenance: 'false',
      limit: '50',
    });
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('no nodes found\n');
  });

  it('refuses a bad --maintenance or --limit (exit 2)', async () => {
    expect((await cli('node', 'list', '--maintenance', 'yes')).code).toBe(2);
    expect((await cli('node', 'list', '--limit', '0')).code).toBe(2);
    expect((await cli('node', 'list', '--limit', '12abc')).code).toBe(2);
    expect(api.requests).toHaveLength(0);
  });

  it('prints the first page and a hint with the marker when there are more', async () => {
    api.on('GET', '/v1/nodes', { status: 200, body: { nodes: [node], next: `/v1/nodes?limit=1&marker=${NODE_ID}` } });
    const result = await cli('node', 'list', '--limit', '1');

    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')).toHaveLength(3);
    expect(result.stderr).toBe(`more: --all or --marker ${NODE_ID}\n`);
  });

  it('--marker asks for the page after that item', async () => {
    api.on('GET', '/v1/nodes', { status: 200, body: { nodes: [node2], next: null } });
    await cli('node', 'list', '--marker', NODE_ID);
    expect(api.only().query).toEqual({ marker: NODE_ID });
  });

  it('--all follows the next links, keeping the filters the server put in them', async () => {
    api.on('GET', '/v1/nodes', (request) =>
      request.query.marker === undefined
        ? { status: 200, body: { nodes: [node], next: `/v1/nodes?owner=physics-lab&limit=1&marker=${NODE_ID}` } }
        : { status: 200, body: { nodes: [node2], next: null } },
    );
    const result = await cli('node', 'list', '--all', '--owner', 'physics-lab', '--limit', '1');

    expect(api.requests.map((r) => r.query)).toEqual([
      { owner: 'physics-lab', limit: '1' },
      { owner: 'physics-lab', limit: '1', marker: NODE_ID },
    ]);
    expect(api.requests.every((r) => r.headers.authorization === 'Bearer lh_test')).toBe(true);
    expect(result.stdout).toContain('gpu-01');
    expect(result.stdout).toContain('old-01');
    expect(result.stderr).toBe('');
  });

  it('--all --json prints one document in the server shape with every item', async () => {
    api.on('GET', '/v1/nodes', (request) =>
      request.query.marker === undefined
        ? { status: 200, body: { nodes: [node], next: `/v1/nodes?marker=${NODE_ID}` } }
        : { status: 200, body: { nodes: [node2], next: null } },
    );
    const result = await cli('node', 'list', '--all', '--json');
    expect(JSON.parse(result.stdout)).toEqual({ nodes: [node, node2], next: null });
  });

  it('--json prints the server page exactly, pretty, with the hint on stderr', async () => {
    const page = { nodes: [node], next: `/v1/nodes?marker=${NODE_ID}` };
    api.on('GET', '/v1/nodes', { status: 200, body: page });
    const result = await cli('node', 'list', '--json');
    expect(result.stdout).toBe(`${JSON.stringify(page, null, 2)}\n`);
    expect(result.stderr).toBe(`more: --all or --marker ${NODE_ID}\n`);
  });

  it('follows next links under a server URL with a path prefix', async () => {
    api.on('GET', '/prefix/v1/nodes', (request) =>
      request.query.marker === undefined
        ? { status: 200, body: { nodes: [node], next: `/v1/nodes?marker=${NODE_ID}` } }
        : { status: 200, body: { nodes: [node2], next: null } },
    );
    const result = await runCli(['node', 'list', '--all', '--url', `${api.url}/prefix/`], { LEASEHOLD_TOKEN: 't0ken', LEASEHOLD_CONFIG: '/nonexistent' });
    expect(result.code).toBe(0);
    expect(api.requests.map((r) => r.url)).toEqual(['/prefix/v1/nodes', `/prefix/v1/nodes?marker=${NODE_ID}`]);
  });
});

describe('leasehold node show, set-owner, sync', () => {
  it('show prints the node as fields, with the extra facts and traits', async () => {
    const busy = { ...node2, target_provision_state: 'active', provision_state: 'deploying', last_error: 'line one\nline two', traits: ['A', 'B'] };
    api.on('GET', `/v1/nodes/${NODE_ID_2}`, { status: 200, body: busy });
    const result = await cli('node', 'show', NODE_ID_2);

    expect(result.stdout).toBe(
      [
        'FIELD            VALUE',
        `id               ${NODE_ID_2}`,
        'name             old-01',
        'owner            legacy-team',
        'lessee           -',
        'resource class   baremetal.compute',
        'memory           8 GiB',
        'cpus             4',
        'gpus             0',
        'disk             2.14 TB',
        'cpu arch         aarch64',
        'traits           A, B',
        'power state      power off',
        'boot device      -',
        'provision state  deploying -> active',
        'maintenance      yes: bad DIMM',
        'quarantined      no',
        'lease            -',
        'last error       line one',
        '                 line two',
        'console enabled  no',
        'synced at        2030-01-01T00:00:00.000Z',
        '',
      ].join('\n'),
    );
  });

  it('show says the boot device where the caller may read it, and whether it holds for every boot', async () => {
    api.on('GET', `/v1/nodes/${NODE_ID}`, { status: 200, body: node });
    api.on('GET', `/v1/nodes/${NODE_ID}/boot-device`, { status: 200, body: { node_id: NODE_ID, boot_device: 'pxe', persistent: false } });
    expect((await cli('node', 'show', NODE_ID)).stdout).toContain('boot device      pxe (next boot only)\n');
    // --json is the node as the server has it: no second request.
    const json = await cli('node', 'show', NODE_ID, '--json');
    expect(JSON.parse(json.stdout)).toEqual(node);
    expect(api.requests.filter((r) => r.path.endsWith('/boot-device'))).toHaveLength(1);
  });

  it('show names the owner project and id, and lists other facts', async () => {
    api.on('GET', `/v1/nodes/${NODE_ID}`, { status: 200, body: node });
    const result = await cli('node', 'show', NODE_ID);
    expect(result.stdout).toContain(`owner            physics-lab (${PROJECT_ID})\n`);
    expect(result.stdout).toContain('fact boot_mode   uefi\n');
  });

  it('show of a node you cannot see prints the 404 and exits 1', async () => {
    api.on('GET', '/v1/nodes/nope', apiError(404, 'not_found', 'node nope not found'));
    const result = await cli('node', 'show', 'nope');
    expect(result).toMatchObject({ code: 1, stdout: '', stderr: 'error: node nope not found (not_found, HTTP 404)\n' });
  });

  it('set-owner sends the project, or null with --none', async () => {
    api.on('PATCH', `/v1/nodes/${NODE_ID}`, { status: 200, body: node });
    await cli('node', 'set-owner', NODE_ID, 'physics-lab');
    await cli('node', 'set-owner', NODE_ID, '--none');
    expect(api.requests.map((r) => [r.method, r.body])).toEqual([
      ['PATCH', { owner: 'physics-lab' }],
      ['PATCH', { owner: null }],
    ]);
  });

  it('set-owner needs exactly one of a project and --none (exit 2)', async () => {
    expect((await cli('node', 'set-owner', NODE_ID)).code).toBe(2);
    expect((await cli('node', 'set-owner', NODE_ID, 'p', '--none')).code).toBe(2);
    expect(api.requests).toHaveLength(0);
  });

  it('sync posts and prints the counts', async () => {
    const counts = { added: 2, updated: 1, removed: 0, unchanged: 5 };
    api.on('POST', '/v1/nodes/sync', { status: 200, body: counts });
    const result = await cli('node', 'sync');
    expect(api.only().method).toBe('POST');
    expect(result.stdout).toBe('FIELD      VALUE\nadded      2\nupdated    1\nremoved    0\nunchanged  5\n');
    expect(JSON.parse((await cli('node', 'sync', '--json')).stdout)).toEqual(counts);
  });

  it('sync as a non-admin prints the 403 and exits 1', async () => {
    api.on('POST', '/v1/nodes/sync', apiError(403, 'forbidden', 'only an operator (admin) can sync the inventory'));
    const result = await cli('node', 'sync');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('error: only an operator (admin) can sync the inventory (forbidden, HTTP 403)\n');
  });
});

describe('leasehold node show: quarantine and lease', () => {
  it('shows the quarantine reason and the lease on the node', async () => {
    const shown = {
      ...node,
      quarantined: true,
      quarantine_reason: 'cleaning failed: disk erase timed out',
      lease: { id: LEASE_ID, project_id: PROJECT_ID, end: '2030-01-04T00:00:00.000Z' },
    };
    api.on('GET', `/v1/nodes/${NODE_ID}`, { status: 200, body: shown });
    const result = await cli('node', 'show', NODE_ID);
    expect(result.stdout).toContain('quarantined      yes: cleaning failed: disk erase timed out\n');
    expect(result.stdout).toContain(`lease            ${LEASE_ID} (project ${PROJECT_ID}, until 2030-01-04T00:00:00.000Z)\n`);
  });
});

describe('leasehold node power, boot-device, unquarantine', () => {
  it('power posts the action and says what was requested', async () => {
    api.on('POST', '/v1/nodes/gpu-01/power', { status: 202, body: { node_id: NODE_ID, action: 'reboot', target_power_state: 'rebooting' } });
    const result = await cli('node', 'power', 'gpu-01', 'reboot');

    expect(api.only().body).toEqual({ action: 'reboot' });
    expect(result).toMatchObject({ code: 0, stdout: 'Power reboot requested for node gpu-01 (target: rebooting)\n', stderr: '' });
  });

  it('power --wait follows the node until it is there, printing each change, and ends with its state', async () => {
    api.on('POST', '/v1/nodes/gpu-01/power', { status: 202, body: { node_id: NODE_ID, action: 'on', target_power_state: 'power on' } });
    const states = ['power off', 'power off', 'power on'];
    api.on('GET', `/v1/nodes/${NODE_ID}`, () => ({ status: 200, body: { ...node, power_state: states.shift() ?? 'power on' } }));
    const clock = fakeClock();
    const result = await runCli(['node', 'power', 'gpu-01', 'on', '--wait'], ENV(), { ...clock });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Node gpu-01 is power on\n');
    expect(result.stderr).toBe('power on requested for node gpu-01\ngpu-01: power off\ngpu-01: power on\n');
    expect(clock.sleeps).toEqual([1000, 1000]);
  });

  it('power --wait gives up after --wait-timeout saying where the node stands (exit 1); --wait-timeout alone is a usage error', async () => {
    api.on('POST', '/v1/nodes/gpu-01/power', { status: 202, body: { node_id: NODE_ID, action: 'off', target_power_state: 'power off' } });
    api.on('GET', `/v1/nodes/${NODE_ID}`, { status: 200, body: { ...node, power_state: 'power on' } });
    const result = await runCli(['node', 'power', 'gpu-01', 'off', '--wait', '--wait-timeout', '5s'], ENV(), { ...fakeClock() });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('gave up waiting after 5s: gpu-01 is power on');
    expect((await cli('node', 'power', 'gpu-01', 'off', '--wait-timeout', '5s')).code).toBe(2);
  });

  it('a busy node gets a hint to try again in a few seconds (exit 1)', async () => {
    api.on('POST', '/v1/nodes/gpu-01/power', apiError(409, 'node_busy', 'node gpu-01 is locked by another operation'));
    const result = await cli('node', 'power', 'gpu-01', 'on');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error: node gpu-01 is locked by another operation (node_busy, HTTP 409)\n');
    expect(result.stderr).toContain('hint: Ironic is in the middle of another operation on this node');
  });

  it('power --json prints the server answer', async () => {
    const answer = { node_id: NODE_ID, action: 'off', target_power_state: 'power off' };
    api.on('POST', `/v1/nodes/${NODE_ID}/power`, { status: 202, body: answer });
    expect(JSON.parse((await cli('node', 'power', NODE_ID, 'off', '--json')).stdout)).toEqual(answer);
  });

  it('power refuses an action other than on, off or reboot (exit 2)', async () => {
    const result = await cli('node', 'power', 'gpu-01', 'cycle');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Allowed choices are on, off, reboot');
    expect(api.requests).toHaveLength(0);
  });

  it('power on a node you do not lease prints the 404 and exits 1', async () => {
    api.on('POST', '/v1/nodes/gpu-09/power', apiError(404, 'not_found', 'node gpu-09 not found'));
    const result = await cli('node', 'power', 'gpu-09', 'on');
    expect(result).toMatchObject({ code: 1, stderr: 'error: node gpu-09 not found (not_found, HTTP 404)\n' });
  });

  it('boot-device sends the device and whether it persists', async () => {
    api.on('POST', '/v1/nodes/gpu-01/boot-device', (request) => ({
      status: 200,
      body: { node_id: NODE_ID, boot_device: (request.body as { device: string }).device, persistent: (request.body as { persistent: boolean }).persistent },
    }));
    const once = await cli('node', 'boot-device', 'gpu-01', 'pxe');
    const always = await cli('node', 'boot-device', 'gpu-01', 'disk', '--persistent');

    expect(api.requests.map((r) => r.body)).toEqual([
      { device: 'pxe', persistent: false },
      { device: 'disk', persistent: true },
    ]);
    expect(once.stdout).toBe('Node gpu-01 boots from pxe next time\n');
    expect(always.stdout).toBe('Node gpu-01 boots from disk from now on\n');
  });

  it('boot-device refuses an unknown device (exit 2)', async () => {
    expect((await cli('node', 'boot-device', 'gpu-01', 'usb')).code).toBe(2);
    expect(api.requests).toHaveLength(0);
  });

  it('unquarantine patches quarantined to false and prints the node', async () => {
    api.on('PATCH', `/v1/nodes/${NODE_ID}`, { status: 200, body: node });
    const result = await cli('node', 'unquarantine', NODE_ID);
    expect(api.only().body).toEqual({ quarantined: false });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('quarantined      no\n');
  });
});
