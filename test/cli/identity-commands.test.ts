import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiError, FakeApi } from './helpers/fake-api.js';
import { FIXED_NOW, runCli } from './helpers/cli-runner.js';
import { PROJECT_ID, project, token, TOKEN_ID, user, USER_ID } from './helpers/fixtures.js';

const TOKEN = 'lh_admin-token-for-tests';
let api: FakeApi;

beforeEach(async () => {
  api = await new FakeApi().start();
});
afterEach(() => api.stop());

/** Runs against the fake server with the token from the environment (no config file is read). */
const cli = (...argv: string[]) => runCli(argv, { LEASEHOLD_URL: api.url, LEASEHOLD_TOKEN: TOKEN, LEASEHOLD_CONFIG: '/nonexistent/leasehold.json' });

describe('leasehold project', () => {
  it('create sends name and description and shows the new project as fields', async () => {
    api.on('POST', '/v1/projects', { status: 201, body: project });
    const result = await cli('project', 'create', 'physics-lab', '--description', 'Physics department');

    expect(result.code).toBe(0);
    const request = api.only();
    expect(request.body).toEqual({ name: 'physics-lab', description: 'Physics department' });
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(request.headers['content-type']).toBe('application/json');
    expect(result.stdout).toBe(
      [
        'FIELD                 VALUE',
        `id                    ${PROJECT_ID}`,
        'name                  physics-lab',
        'description           Physics department',
        'max nodes             unlimited',
        'max lease duration    P5D',
        'max node-hours/month  unlimited',
        'created at            2029-12-01T10:00:00.000Z',
        'updated at            2029-12-02T10:00:00.000Z',
        '',
      ].join('\n'),
    );
  });

  it('list prints an aligned table', async () => {
    const other = { ...project, id: 'a1', name: 'bio', description: null, quota: { max_nodes: 4, max_lease_duration: null } };
    api.on('GET', '/v1/projects', { status: 200, body: { projects: [project, other], next: null } });
    const result = await cli('project', 'list');

    expect(result.stdout).toBe(
      [
        'NAME         ID                                    MAX NODES  MAX LEASE  DESCRIPTION',
        `physics-lab  ${PROJECT_ID}  unlimited  P5D        Physics department`,
        'bio          a1                                    4          unlimited  -',
        '',
      ].join('\n'),
    );
    expect(result.stderr).toBe('');
  });

  it('show accepts a name and puts it in the path', async () => {
    api.on('GET', '/v1/projects/physics%20lab', { status: 200, body: project });
    const result = await cli('project', 'show', 'physics lab', '--json');
    expect(api.only().url).toBe('/v1/projects/physics%20lab');
    expect(JSON.parse(result.stdout)).toEqual(project);
  });

  it('set sends only the given fields, quota durations as ISO 8601 and "none" as null', async () => {
    api.on('PATCH', '/v1/projects/physics-lab', { status: 200, body: project });
    await cli('project', 'set', 'physics-lab', '--max-nodes', '10', '--max-lease-duration', '5d');
    await cli('project', 'set', 'physics-lab', '--max-nodes', 'none', '--max-lease-duration', 'none', '--name', 'phys');

    expect(api.requests.map((r) => r.body)).toEqual([
      { quota: { max_nodes: 10, max_lease_duration: 'P5D' } },
      { name: 'phys', quota: { max_nodes: null, max_lease_duration: null } },
    ]);
  });

  it('set refuses a bad duration or count before sending anything (exit 2)', async () => {
    const badDuration = await cli('project', 'set', 'physics-lab', '--max-lease-duration', '5 days');
    expect(badDuration.code).toBe(2);
    expect(badDuration.stderr).toContain("option '--max-lease-duration <duration|none>' argument '5 days' is invalid");

    const badCount = await cli('project', 'set', 'physics-lab', '--max-nodes', '-1');
    expect(badCount.code).toBe(2);

    const nothing = await cli('project', 'set', 'physics-lab');
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toBe('error: nothing to change: give --name, --description, --max-nodes, --max-lease-duration, --max-node-hours or --notice-offsets\n');
    expect(api.requests).toHaveLength(0);
  });
});

describe('leasehold user', () => {
  it('create sends the project (id or name) and role', async () => {
    api.on('POST', '/v1/users', { status: 201, body: user });
    const result = await cli('user', 'create', 'alice', '--project', 'physics-lab', '--role', 'member');

    expect(result.code).toBe(0);
    expect(api.only().body).toEqual({ name: 'alice', project_id: 'physics-lab', role: 'member' });
    expect(result.stdout).toContain(`id          ${USER_ID}`);
    expect(result.stdout).toContain(`project     physics-lab (${PROJECT_ID})`);
  });

  it('create makes an admin with no project', async () => {
    api.on('POST', '/v1/users', { status: 201, body: { ...user, role: 'admin', project_id: null } });
    await cli('user', 'create', 'ops', '--role', 'admin');
    expect(api.only().body).toEqual({ name: 'ops', project_id: null, role: 'admin' });
  });

  it('create is a usage error for a project role without --project, admin with one, or an unknown role', async () => {
    const noProject = await cli('user', 'create', 'bob', '--role', 'reader');
    expect(noProject).toMatchObject({ code: 2, stderr: 'error: a reader belongs to a project: give --project <id or name>\n' });
    expect((await cli('user', 'create', 'ops', '--role', 'admin', '--project', 'x')).code).toBe(2);
    const badRole = await cli('user', 'create', 'bob', '--project', 'x', '--role', 'owner');
    expect(badRole.code).toBe(2);
    expect(badRole.stderr).toContain('Allowed choices are reader, member, manager, admin');
    const noRole = await cli('user', 'create', 'bob', '--project', 'x');
    expect(noRole.code).toBe(2);
    expect(noRole.stderr).toContain("required option '--role <role>' not specified");
    expect(api.requests).toHaveLength(0);
  });

  it('list filters by project', async () => {
    api.on('GET', '/v1/users', { status: 200, body: { users: [user], next: null } });
    const result = await cli('user', 'list', '--project', 'physics-lab');
    expect(api.only().query).toEqual({ project_id: 'physics-lab' });
    expect(result.stdout.split('\n')).toEqual([
      'NAME   ID                                    ROLE    PROJECT      CREATED AT',
      `alice  ${USER_ID}  member  physics-lab  2029-12-03T10:00:00.000Z`,
      '',
    ]);
  });

  it('show fetches one user', async () => {
    api.on('GET', `/v1/users/${USER_ID}`, { status: 200, body: user });
    const result = await cli('user', 'show', USER_ID);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('role        member');
  });
});

describe('leasehold token', () => {
  const created = { ...token, token: 'lh_abc123-the-secret-value' };

  it('create prints the value once with a warning to save it', async () => {
    api.on('POST', '/v1/tokens', { status: 201, body: created });
    const result = await cli('token', 'create', '--user', USER_ID, '--description', 'CI');

    expect(api.only().body).toEqual({ user_id: USER_ID, description: 'CI' });
    expect(result.stdout).toContain('token        lh_abc123-the-secret-value\n');
    expect(result.stdout).toContain('expires at   never');
    expect(result.stderr).toBe('Save this token now: it is not shown again.\n');
  });

  it('create --expires-in sends now + duration as expires_at', async () => {
    api.on('POST', '/v1/tokens', { status: 201, body: created });
    await cli('token', 'create', '--user', USER_ID, '--expires-in', '30d');
    expect(api.only().body).toEqual({ user_id: USER_ID, expires_at: new Date(FIXED_NOW.getTime() + 30 * 86_400_000).toISOString() });
  });

  it('create --expires-at sends the time in UTC', async () => {
    api.on('POST', '/v1/tokens', { status: 201, body: created });
    await cli('token', 'create', '--user', USER_ID, '--expires-at', '2030-01-31T18:00:00+02:00');
    expect(api.only().body).toEqual({ user_id: USER_ID, expires_at: '2030-01-31T16:00:00.000Z' });
  });

  it('create refuses both expiry options, a bad time or a bad duration (exit 2)', async () => {
    const both = await cli('token', 'create', '--user', USER_ID, '--expires-in', '1d', '--expires-at', '2030-02-01T00:00:00Z');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('cannot be used with');
    expect((await cli('token', 'create', '--user', USER_ID, '--expires-at', 'tomorrow')).code).toBe(2);
    expect((await cli('token', 'create', '--user', USER_ID, '--expires-at', '2030-02-31T00:00:00Z')).code).toBe(2);
    expect((await cli('token', 'create', '--user', USER_ID, '--expires-in', '0s')).code).toBe(2);
    expect((await cli('token', 'create', '--expires-in', '1d')).code).toBe(2);
    expect(api.requests).toHaveLength(0);
  });

  it('create --json prints the full object including the value', async () => {
    api.on('POST', '/v1/tokens', { status: 201, body: created });
    const result = await cli('--json', 'token', 'create', '--user', USER_ID);
    expect(JSON.parse(result.stdout)).toEqual(created);
    expect(result.stderr).toBe('');
  });

  it('list shows status, never values, and filters by user', async () => {
    const revoked = { ...token, id: 't2', revoked_at: '2029-12-31T00:00:00.000Z', description: null };
    const expired = { ...token, id: 't3', expires_at: '2029-06-01T00:00:00.000Z' };
    api.on('GET', '/v1/tokens', { status: 200, body: { tokens: [token, revoked, expired], next: null } });
    const result = await cli('token', 'list', '--user', USER_ID);

    expect(api.only().query).toEqual({ user_id: USER_ID });
    const rows = result.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^ID +PREFIX +USER ID +STATUS +EXPIRES AT +DESCRIPTION$/);
    expect(rows[1]).toMatch(new RegExp(`^${TOKEN_ID} +lh_abc123 +${USER_ID} +active +never +CI$`));
    expect(rows[2]).toMatch(/^t2 .* revoked .* -$/);
    expect(rows[3]).toMatch(/ expired +2029-06-01T00:00:00.000Z +CI$/);
  });

  it('revoke sends DELETE and confirms', async () => {
    api.on('DELETE', `/v1/tokens/${TOKEN_ID}`, { status: 204 });
    const result = await cli('token', 'revoke', TOKEN_ID);
    expect(result).toEqual({ code: 0, stdout: `Revoked token ${TOKEN_ID}\n`, stderr: '' });
    expect(api.only().method).toBe('DELETE');
  });

  it('revoke refuses a token value so it never lands in a URL', async () => {
    const result = await cli('token', 'revoke', 'lh_abc123-the-secret-value');
    expect(result.code).toBe(2);
    expect(result.stderr).not.toContain('the-secret-value');
    expect(api.requests).toHaveLength(0);
  });

  it('revoke of an unknown id prints the server error and exits 1', async () => {
    const gone = '00000000-0000-4000-8000-00000000dead';
    api.on('DELETE', `/v1/tokens/${gone}`, apiError(404, 'not_found', `token ${gone} not found`, { kind: 'token' }));
    const result = await cli('token', 'revoke', gone);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`error: token ${gone} not found (not_found, HTTP 404)\ndetails: {"kind":"token"}\n`);
  });

  it('revoke of something that is neither an id nor an id prefix says so without asking the server, and exits 1', async () => {
    const result = await cli('token', 'revoke', 'nope');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('error: token "nope" not found: no token you can see has that id or id prefix (not_found, HTTP 404)\ndetails: {"resource":"token","id":"nope"}\n');
    expect(api.requests).toEqual([]);
  });
});
