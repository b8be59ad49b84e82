import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiError, FakeApi, type RecordedRequest } from './helpers/fake-api.js';
import { FIXED_NOW, runCli, tempDir, type CliResult, type RunOptions } from './helpers/cli-runner.js';
import {
  ALICE_PASSWORD,
  APP_CREDENTIAL,
  APP_SECRET,
  service,
  startKeystone,
  type FakeKeystone,
} from './helpers/fake-keystone.js';
import { me } from './helpers/fixtures.js';

/** A port nothing listens on: a request sent there would fail the test with exit 3. */
const NOWHERE = 'http://127.0.0.1:9';

let api: FakeApi;
let keystone: FakeKeystone;
let dir: string;
let cleanup: () => Promise<void>;
let places: RunOptions;

beforeEach(async () => {
  api = await new FakeApi()
    .on('GET', '/v1/me', { status: 200, body: me })
    .on('GET', '/v1/nodes', { status: 200, body: { nodes: [], next: null } })
    .on('POST', '/v1/nodes/gpu-01/power', { status: 202, body: { action: 'on', target_power_state: 'power on' } })
    .start();
  keystone = await startKeystone([service('leasehold', api.url, NOWHERE)]);
  ({ dir, cleanup } = await tempDir());
  places = { cloudFilePlaces: { cwd: join(dir, 'cwd'), siteConfigDirs: [] } };
});

afterEach(async () => {
  await api.stop();
  await keystone.stop();
  await cleanup();
});

const cacheDir = (): string => join(dir, 'cache', 'leasehold');

/** Alice in physics-lab by the OS_* variables, no URL: Leasehold is found in the catalog. */
function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOME: join(dir, 'home'),
    LEASEHOLD_CONFIG: join(dir, 'config.json'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    OS_AUTH_URL: keystone.v3,
    OS_USERNAME: 'alice',
    OS_PASSWORD: ALICE_PASSWORD,
    OS_PROJECT_NAME: 'physics-lab',
    ...extra,
  };
}

const tokenOf = (request: RecordedRequest | undefined): string => request?.headers['x-auth-token'] as string;

function expectNoSecret(result: CliResult): void {
  for (const secret of [ALICE_PASSWORD, APP_SECRET, ...keystone.issued.keys()]) {
    expect(result.stdout + result.stderr).not.toContain(secret);
  }
}

async function cacheFiles(): Promise<string[]> {
  return (await readdir(cacheDir()).catch(() => [] as string[])).map((name) => join(cacheDir(), name));
}

describe('Leasehold found in the token\'s catalog', () => {
  it('takes a service of type leasehold before the baremetal endpoint', async () => {
    keystone.catalog.push(service('baremetal', `${NOWHERE}/baremetal`));
    const result = await runCli(['whoami'], env(), places);
    expect(result.code).toBe(0);
    expect(api.only().path).toBe('/v1/me');
    expect(result.stdout).toContain(`server          ${api.url} (from Keystone catalog: leasehold service, interface public)`);
  });

  it('takes the baremetal endpoint without its /baremetal, on OS_INTERFACE and in OS_REGION_NAME', async () => {
    api.on('GET', '/lh/v1/me', { status: 200, body: me });
    keystone.catalog = [
      service('baremetal', `${NOWHERE}/baremetal`, `${NOWHERE}/lh/baremetal`, 'RegionTwo'),
      service('baremetal', `${NOWHERE}/baremetal`, `${api.url}/lh/baremetal/`, 'RegionOne'),
    ];
    const result = await runCli(['whoami'], env({ OS_INTERFACE: 'internal', OS_REGION_NAME: 'RegionOne' }), places);
    expect(result.code).toBe(0);
    expect(api.only().path).toBe('/lh/v1/me');
  });

  it('uses --url or LEASEHOLD_URL rather than the catalog', async () => {
    keystone.catalog = [service('leasehold', NOWHERE)];
    expect((await runCli(['whoami', '--url', api.url], env(), places)).code).toBe(0);
    expect((await runCli(['whoami'], env({ LEASEHOLD_URL: api.url }), places)).code).toBe(0);
    expect(api.requests).toHaveLength(2);
    for (const request of api.requests) expect(keystone.issued.has(tokenOf(request))).toBe(true);
  });

  it('exits 2 saying so when the catalog has no Leasehold for the interface', async () => {
    keystone.catalog = [service('compute', api.url)];
    const none = await runCli(['node', 'list'], env({ OS_INTERFACE: 'admin' }), places);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe(
      'error: no Leasehold URL: the Keystone catalog has no leasehold or baremetal endpoint for interface admin; ' +
        'give --url or LEASEHOLD_URL, or register Leasehold in the Keystone catalog (see `leasehold help login`)\n',
    );
    expectNoSecret(none);
  });

  it('exits 2 rather than send Leasehold commands to an Ironic registered as baremetal', async () => {
    keystone.catalog = [service('baremetal', 'http://127.0.0.1:6385')];
    const ironic = await runCli(['node', 'list'], env(), places);
    expect(ironic.code).toBe(2);
    expect(ironic.stderr).toContain('is http://127.0.0.1:6385, which is not a Leasehold gateway (it does not end in /baremetal)');
  });
});

describe('the token cache', () => {
  it('costs one Keystone call for three commands, in a 0600 file of a 0700 directory without the password', async () => {
    for (const argv of [['whoami'], ['node', 'list'], ['node', 'power', 'gpu-01', 'on']]) {
      const result = await runCli(argv, env(), places);
      expect(result.code).toBe(0);
      expectNoSecret(result);
    }

    expect(keystone.tokenRequests).toHaveLength(1);
    const [token] = [...keystone.issued.keys()];
    expect(api.requests.map(tokenOf)).toEqual([token, token, token]);
    const files = await cacheFiles();
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/keystone-[0-9a-f]{64}\.json$/);
    expect((await stat(files[0]!)).mode & 0o777).toBe(0o600);
    expect((await stat(cacheDir())).mode & 0o777).toBe(0o700);
    const text = await readFile(files[0]!, 'utf8');
    expect(text).not.toContain(ALICE_PASSWORD);
    expect(JSON.parse(text)).toMatchObject({ identity: 'alice@physics-lab', token, expires_at: '2030-01-01T01:00:00.000Z' });
  });

  it('asks Keystone again from a minute before the cached token expires', async () => {
    const at = (ms: number): RunOptions => ({ ...places, now: () => new Date(FIXED_NOW.getTime() + ms) });
    await runCli(['whoami'], env(), at(0));
    await runCli(['whoami'], env(), at(3_600_000 - 61_000));
    expect(keystone.tokenRequests).toHaveLength(1);
    await runCli(['whoami'], env(), at(3_600_000 - 59_000));
    expect(keystone.tokenRequests).toHaveLength(2);
  });

  it('never lends one identity\'s token to another', async () => {
    await runCli(['whoami'], env(), places);
    await runCli(['whoami'], env({ OS_PROJECT_NAME: 'chemistry' }), places);
    await runCli(['whoami'], env({ OS_USERNAME: '', OS_USER_ID: 'x' }), places);
    await runCli(['whoami'], env(), places);
    expect(keystone.tokenRequests).toHaveLength(3);
    expect(new Set(api.requests.map(tokenOf)).size).toBe(2);
    expect(await cacheFiles()).toHaveLength(2);
  });

  it('keeps an application credential\'s token without its secret', async () => {
    const appEnv = env({ OS_APPLICATION_CREDENTIAL_ID: APP_CREDENTIAL.id, OS_APPLICATION_CREDENTIAL_SECRET: APP_SECRET, OS_PASSWORD: '' });
    expect((await runCli(['whoami'], appEnv, places)).code).toBe(0);
    expect((await runCli(['whoami'], appEnv, places)).code).toBe(0);
    expect(keystone.tokenRequests).toHaveLength(1);
    expect(await readFile((await cacheFiles())[0]!, 'utf8')).not.toContain(APP_SECRET);
  });

  it('after a 401 from Leasehold drops the cached token, asks Keystone once more and retries the request once', async () => {
    await runCli(['whoami'], env(), places);
    const [revoked] = [...keystone.issued.keys()];
    api.on('POST', '/v1/nodes/gpu-01/power', (request) =>
      tokenOf(request) === revoked
        ? apiError(401, 'unauthenticated', 'the token is not valid')
        : { status: 202, body: { action: 'on', target_power_state: 'power on' } },
    );
    api.requests.length = 0;

    const result = await runCli(['node', 'power', 'gpu-01', 'on'], env(), places);

    expect(result.code).toBe(0);
    expect(keystone.tokenRequests).toHaveLength(2);
    const renewed = [...keystone.issued.keys()][1];
    expect(api.requests.map(tokenOf)).toEqual([revoked, renewed]);
    expect(api.requests.map((r) => r.body)).toEqual([{ action: 'on' }, { action: 'on' }]);
    expect(JSON.parse(await readFile((await cacheFiles())[0]!, 'utf8')).token).toBe(renewed);
    expectNoSecret(result);
  });

  it('retries only once when Leasehold keeps refusing, and says the Keystone token was refused', async () => {
    api.on('GET', '/v1/me', apiError(401, 'unauthenticated', 'the token is not valid'));
    const result = await runCli(['whoami'], env(), places);
    expect(result.code).toBe(1);
    expect(api.requests).toHaveLength(2);
    expect(keystone.tokenRequests).toHaveLength(2);
    expect(result.stderr).toBe(
      'error: the token is not valid; the Keystone token of alice@physics-lab was refused; ' +
        'does the server run with LEASEHOLD_IDENTITY=keystone? (unauthenticated, HTTP 401)\n',
    );
    expectNoSecret(result);
  });

  it('is emptied by logout', async () => {
    await runCli(['whoami'], env(), places);
    const result = await runCli(['logout'], env(), places);
    expect(result.stderr).toBe(`Not logged in (no ${join(dir, 'config.json')})\nRemoved 1 cached Keystone token from ${cacheDir()}\n`);
    expect(await cacheFiles()).toHaveLength(0);
    await runCli(['whoami'], env(), places);
    expect(keystone.tokenRequests).toHaveLength(2);
  });
});

describe('leasehold login --os-cloud', () => {
  const config = (): string => join(dir, 'config.json');
  /** Only the cloud's name: no OS_* variables. */
  const cloudEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
    HOME: join(dir, 'home'),
    LEASEHOLD_CONFIG: config(),
    XDG_CACHE_HOME: join(dir, 'cache'),
    ...extra,
  });

  beforeEach(async () => {
    const file = join(dir, 'home', '.config', 'openstack', 'clouds.yaml');
    await mkdir(dirname(file), { recursive: true });
    await writeFile(
      file,
      `clouds:\n  mycloud:\n    auth:\n      auth_url: ${keystone.url}\n      username: alice\n      password: ${ALICE_PASSWORD}\n      project_name: physics-lab\n`,
    );
  });

  it('checks the credentials with a new token, says who and which project, and saves only the cloud\'s name', async () => {
    await runCli(['whoami', '--os-cloud', 'mycloud'], cloudEnv(), places);
    const result = await runCli(['login', '--os-cloud', 'mycloud'], cloudEnv(), places);

    expect(result.code).toBe(0);
    expect(keystone.tokenRequests).toHaveLength(2); // not the cached token: login checks the credentials
    expect(result.stdout).toBe(
      `Logged in to ${api.url} as alice (member in project physics-lab).\n` +
        `Keystone ${keystone.v3}: alice in project physics-lab (cloud mycloud, ${join(dir, 'home', '.config', 'openstack', 'clouds.yaml')}).\n`,
    );
    expect(JSON.parse(await readFile(config(), 'utf8'))).toEqual({ cloud: 'mycloud' });
    expect((await stat(config())).mode & 0o777).toBe(0o600);
    expectNoSecret(result);

    const later = await runCli(['whoami'], cloudEnv(), places);
    expect(later.code).toBe(0);
    expect(later.stdout).toContain('token from      Keystone, password of alice@physics-lab; cloud mycloud from config file (');
    expect(later.stdout).toMatch(/keystone token {2}cached token, alice in project physics-lab, expires 2030-01-01T01:00:00.000Z/);
    expect(keystone.tokenRequests).toHaveLength(2);
  });

  it('takes OS_CLOUD, and saves a URL given with it for later commands', async () => {
    keystone.catalog = [];
    const result = await runCli(['login', '--url', api.url], cloudEnv({ OS_CLOUD: 'mycloud' }), places);
    expect(result.code).toBe(0);
    expect(JSON.parse(await readFile(config(), 'utf8'))).toEqual({ cloud: 'mycloud', url: api.url });
    const later = await runCli(['node', 'list'], cloudEnv(), places);
    expect(later.code).toBe(0);
    expect(api.requests.map((r) => r.path)).toEqual(['/v1/me', '/v1/nodes']);
  });

  it('saves nothing when Keystone refuses the credentials (exit 1) or Leasehold refuses the token', async () => {
    const first = await runCli(['login', '--os-cloud', 'mycloud'], cloudEnv({ OS_PASSWORD: 'ignored' }), places);
    expect(first.code).toBe(0); // the cloud's own password wins over OS_PASSWORD
    await runCli(['logout'], cloudEnv(), places);

    keystone.users.splice(0, 1, { ...keystone.users[0]!, password: 'changed-since' });
    const wrong = await runCli(['login', '--os-cloud', 'mycloud'], cloudEnv(), places);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe(`error: Keystone refused the credentials of alice@physics-lab (${keystone.v3})\n`);
    await expect(stat(config())).rejects.toThrow(/ENOENT/);

    keystone.users.splice(0, 1, { ...keystone.users[0]!, password: ALICE_PASSWORD });
    api.on('GET', '/v1/me', apiError(401, 'unauthenticated', 'the token is not valid'));
    const leasehold = await runCli(['login', '--os-cloud', 'mycloud'], cloudEnv(), places);
    expect(leasehold.code).toBe(1);
    await expect(stat(config())).rejects.toThrow(/ENOENT/);
    expectNoSecret(leasehold);
  });

  it('is a usage error with both --token and --os-cloud', async () => {
    const result = await runCli(['login', '--token', 'lh_abcdef123456', '--os-cloud', 'mycloud'], cloudEnv(), places);
    expect(result).toMatchObject({ code: 2, stderr: 'error: login takes --token or --os-cloud, not both\n' });
  });
});
