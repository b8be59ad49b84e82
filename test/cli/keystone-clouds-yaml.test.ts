import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeApi } from './helpers/fake-api.js';
import { runCli, tempDir, type CliResult, type RunOptions } from './helpers/cli-runner.js';
import { ADMIN, ALICE_PASSWORD, APP_CREDENTIAL, APP_SECRET, CHEMISTRY, PHYSICS, startKeystone, type FakeKeystone } from './helpers/fake-keystone.js';
import { me } from './helpers/fixtures.js';

let api: FakeApi;
let keystone: FakeKeystone;
let dir: string;
let cleanup: () => Promise<void>;
let places: RunOptions;

beforeEach(async () => {
  api = await new FakeApi().on('GET', '/v1/me', { status: 200, body: me }).start();
  keystone = await startKeystone();
  ({ dir, cleanup } = await tempDir());
  places = { cloudFilePlaces: { cwd: join(dir, 'cwd'), siteConfigDirs: [join(dir, 'etc', 'openstack')] } };
});

afterEach(async () => {
  await api.stop();
  await keystone.stop();
  await cleanup();
});

const CONFIG_HOME = (): string => join(dir, 'home', '.config');

/** A home with no saved login, a private cache and config home, talking to the fake Leasehold. */
function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOME: join(dir, 'home'),
    LEASEHOLD_CONFIG: join(dir, 'none.json'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    LEASEHOLD_URL: api.url,
    ...extra,
  };
}

async function write(path: string, text: string): Promise<string> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
  return path;
}

/** The clouds.yaml of a Horizon download: no password in it. */
function cloudsYaml(project = 'physics-lab'): string {
  return `clouds:
  mycloud:
    auth:
      auth_url: ${keystone.url}/v3
      username: alice
      project_name: ${project}
      user_domain_name: Default
      project_domain_id: default
    region_name: RegionOne
    interface: public
    identity_api_version: 3
  admincloud:
    auth:
      auth_url: ${keystone.url}
      username: admin
      password: ${ADMIN.password}
      system_scope: all
  ci:
    auth_type: v3applicationcredential
    auth:
      auth_url: ${keystone.url}
      application_credential_id: ${APP_CREDENTIAL.id}
`;
}

const SECURE_YAML = `clouds:
  mycloud:
    auth:
      password: ${ALICE_PASSWORD}
  ci:
    auth:
      application_credential_secret: ${APP_SECRET}
`;

function tokenSent(): { project: unknown; system: boolean } {
  const token = api.only().headers['x-auth-token'] as string;
  const held = keystone.issued.get(token);
  expect(held).toBeDefined();
  return { project: held?.project, system: held?.system ?? false };
}

function expectNoSecret(result: CliResult): void {
  for (const secret of [ALICE_PASSWORD, APP_SECRET, ADMIN.password, ...keystone.issued.keys()]) {
    expect(result.stdout + result.stderr).not.toContain(secret);
  }
}

describe('clouds.yaml and secure.yaml, found where openstacksdk looks', () => {
  it('reads --os-cloud from ~/.config/openstack/clouds.yaml with the password of secure.yaml merged in', async () => {
    await write(join(CONFIG_HOME(), 'openstack', 'clouds.yaml'), cloudsYaml());
    await write(join(CONFIG_HOME(), 'openstack', 'secure.yaml'), SECURE_YAML);

    const result = await runCli(['whoami', '--os-cloud', 'mycloud'], env(), places);

    expect(result.code).toBe(0);
    expect(keystone.tokenRequests[0]?.body.auth).toEqual({
      identity: {
        methods: ['password'],
        password: { user: { name: 'alice', domain: { name: 'Default' }, password: ALICE_PASSWORD } },
      },
      scope: { project: { name: 'physics-lab', domain: { id: 'default' } } },
    });
    expect(tokenSent().project).toEqual(PHYSICS);
    expect(result.stdout).toContain(`cloud mycloud from --os-cloud (${join(CONFIG_HOME(), 'openstack', 'clouds.yaml')} + `);
    expectNoSecret(result);
  });

  it('takes ./clouds.yaml before the user\'s, $XDG_CONFIG_HOME before ~/.config, and /etc/openstack last', async () => {
    await write(join(dir, 'etc', 'openstack', 'clouds.yaml'), cloudsYaml('nowhere'));
    await write(join(dir, 'etc', 'openstack', 'secure.yaml'), SECURE_YAML);
    const site = await runCli(['whoami'], env({ OS_CLOUD: 'mycloud' }), places);
    expect(site.code).toBe(1); // alice has no role on "nowhere": the site's file was the one read.
    expect(site.stderr).toContain('Keystone refused the credentials of alice@nowhere');

    await write(join(dir, 'home', '.config', 'openstack', 'clouds.yaml'), cloudsYaml('nowhere-either'));
    await write(join(dir, 'xdg', 'openstack', 'clouds.yaml'), cloudsYaml('chemistry'));
    keystone.requests.length = 0;
    api.requests.length = 0;
    const xdg = await runCli(['whoami'], env({ OS_CLOUD: 'mycloud', XDG_CONFIG_HOME: join(dir, 'xdg') }), places);
    expect(xdg.code).toBe(0);
    expect(tokenSent().project).toEqual(CHEMISTRY);

    await write(join(dir, 'cwd', 'clouds.yml'), cloudsYaml('physics-lab'));
    keystone.requests.length = 0;
    api.requests.length = 0;
    const cwd = await runCli(['whoami'], env({ OS_CLOUD: 'mycloud', XDG_CONFIG_HOME: join(dir, 'xdg') }), places);
    expect(cwd.code).toBe(0);
    expect(tokenSent().project).toEqual(PHYSICS);
  });

  it('takes the file named by OS_CLIENT_CONFIG_FILE first', async () => {
    await write(join(dir, 'cwd', 'clouds.yaml'), cloudsYaml('nowhere'));
    const file = await write(join(dir, 'elsewhere.yaml'), cloudsYaml());
    const result = await runCli(['whoami', '--os-cloud', 'mycloud'], env({ OS_CLIENT_CONFIG_FILE: file, OS_PASSWORD: ALICE_PASSWORD }), places);
    expect(result.code).toBe(0);
    expect(tokenSent().project).toEqual(PHYSICS);
  });

  it('fills a password the cloud leaves out from OS_PASSWORD, and never overrides one it sets', async () => {
    await write(join(CONFIG_HOME(), 'openstack', 'clouds.yaml'), cloudsYaml());
    const filled = await runCli(['whoami'], env({ OS_CLOUD: 'mycloud', OS_PASSWORD: ALICE_PASSWORD }), places);
    expect(filled.code).toBe(0);

    const kept = await runCli(['whoami'], env({ OS_CLOUD: 'admincloud', OS_PASSWORD: ALICE_PASSWORD }), places);
    expect(kept.code).toBe(0);
    expect(keystone.tokenRequests[1]?.body.auth).toMatchObject({
      identity: { password: { user: { name: 'admin', password: ADMIN.password } } },
      scope: { system: { all: true } },
    });
  });

  it('uses an application credential whose secret is in secure.yaml', async () => {
    await write(join(CONFIG_HOME(), 'openstack', 'clouds.yaml'), cloudsYaml());
    await write(join(dir, 'etc', 'openstack', 'secure.yaml'), SECURE_YAML);
    const result = await runCli(['whoami', '--os-cloud', 'ci'], env(), places);
    expect(result.code).toBe(0);
    expect(tokenSent().project).toEqual(CHEMISTRY);
    expectNoSecret(result);
  });

  it('exits 2 listing the clouds it found when the named cloud is not there, without asking Keystone', async () => {
    const file = await write(join(CONFIG_HOME(), 'openstack', 'clouds.yaml'), cloudsYaml());
    const result = await runCli(['whoami', '--os-cloud', 'mycluod'], env(), places);
    expect(result).toMatchObject({
      code: 2,
      stderr: `error: cloud "mycluod" is not in ${file}; the clouds there: mycloud, admincloud, ci\n`,
    });
    expect(keystone.requests).toHaveLength(0);
  });

  it('exits 2 naming where it looked when there is no clouds.yaml', async () => {
    const result = await runCli(['whoami'], env({ OS_CLOUD: 'mycloud' }), places);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`cloud "mycloud": no clouds.yaml found (looked in ${join(dir, 'cwd')}, `);
    expect(result.stderr).toContain(join(dir, 'etc', 'openstack'));
  });

  it('exits 2 on a damaged clouds.yaml without quoting its lines (they may hold a password)', async () => {
    await write(join(CONFIG_HOME(), 'openstack', 'clouds.yaml'), `clouds:\n  mycloud:\n    auth: {password: "${ALICE_PASSWORD}\n`);
    const result = await runCli(['whoami', '--os-cloud', 'mycloud'], env(), places);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('is not valid YAML');
    expectNoSecret(result);
  });
});

describe('which credentials win', () => {
  beforeEach(async () => {
    await write(join(CONFIG_HOME(), 'openstack', 'clouds.yaml'), cloudsYaml());
    await write(join(CONFIG_HOME(), 'openstack', 'secure.yaml'), SECURE_YAML);
  });

  const osVariables = (): Record<string, string> => ({
    OS_AUTH_URL: keystone.v3,
    OS_USERNAME: 'admin',
    OS_PASSWORD: ADMIN.password,
    OS_SYSTEM_SCOPE: 'all',
  });

  it('--token and LEASEHOLD_TOKEN beat every Keystone setting: no Keystone call, a Bearer token', async () => {
    const flag = await runCli(['whoami', '--token', 'lh_flag-token-123456', '--os-cloud', 'mycloud'], env(osVariables()), places);
    expect(flag.code).toBe(0);
    expect(api.only().headers.authorization).toBe('Bearer lh_flag-token-123456');

    api.requests.length = 0;
    const variable = await runCli(['whoami'], env({ LEASEHOLD_TOKEN: 'lh_env-token-123456', OS_CLOUD: 'mycloud', ...osVariables() }), places);
    expect(variable.code).toBe(0);
    expect(api.only().headers.authorization).toBe('Bearer lh_env-token-123456');
    expect(keystone.requests).toHaveLength(0);
  });

  it('--os-cloud on the command line beats LEASEHOLD_TOKEN in the environment (a flag beats a variable)', async () => {
    const result = await runCli(['whoami', '--os-cloud', 'mycloud'], env({ LEASEHOLD_TOKEN: 'lh_env-token-123456' }), places);
    expect(result.code).toBe(0);
    expect(tokenSent().project).toEqual(PHYSICS);
  });

  it('OS_CLOUD beats the OS_* variables, and they beat the saved login', async () => {
    const cloud = await runCli(['whoami'], env({ OS_CLOUD: 'mycloud', ...osVariables() }), places);
    expect(cloud.code).toBe(0);
    expect(tokenSent()).toEqual({ project: PHYSICS, system: false });

    api.requests.length = 0;
    const saved = await write(join(dir, 'saved.json'), JSON.stringify({ url: api.url, token: 'lh_saved-token-123456' }));
    const variables = await runCli(['whoami'], env({ ...osVariables(), LEASEHOLD_CONFIG: saved }), places);
    expect(variables.code).toBe(0);
    expect(tokenSent()).toEqual({ project: undefined, system: true });

    api.requests.length = 0;
    const login = await runCli(['whoami'], env({ LEASEHOLD_CONFIG: saved }), places);
    expect(login.code).toBe(0);
    expect(api.only().headers.authorization).toBe('Bearer lh_saved-token-123456');
  });

  it('an empty OS_AUTH_URL is unset: the saved login is used', async () => {
    const saved = await write(join(dir, 'saved.json'), JSON.stringify({ url: api.url, token: 'lh_saved-token-123456' }));
    const result = await runCli(['whoami'], env({ LEASEHOLD_CONFIG: saved, OS_AUTH_URL: ' ', OS_USERNAME: 'alice' }), places);
    expect(result.code).toBe(0);
    expect(api.only().headers.authorization).toBe('Bearer lh_saved-token-123456');
  });
});
