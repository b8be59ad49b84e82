import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeApi } from './helpers/fake-api.js';
import { runCli, tempDir, type CliResult } from './helpers/cli-runner.js';
import {
  ADMIN,
  ALICE,
  ALICE_PASSWORD,
  APP_CREDENTIAL,
  APP_SECRET,
  CHEMISTRY,
  PHYSICS,
  startKeystone,
  type FakeKeystone,
} from './helpers/fake-keystone.js';
import { me } from './helpers/fixtures.js';

let api: FakeApi;
let keystone: FakeKeystone;
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  api = await new FakeApi().on('GET', '/v1/me', { status: 200, body: me }).start();
  keystone = await startKeystone();
  ({ dir, cleanup } = await tempDir());
});

afterEach(async () => {
  await api.stop();
  await keystone.stop();
  await cleanup();
});

/** The environment of a shell with only the given OS_* variables, talking to the fake Leasehold. */
function env(os: Record<string, string>): Record<string, string> {
  return { LEASEHOLD_CONFIG: join(dir, 'none.json'), XDG_CACHE_HOME: join(dir, 'cache'), LEASEHOLD_URL: api.url, ...os };
}

function aliceEnv(extra: Record<string, string> = {}): Record<string, string> {
  return env({
    OS_AUTH_URL: keystone.v3,
    OS_USERNAME: 'alice',
    OS_PASSWORD: ALICE_PASSWORD,
    OS_PROJECT_NAME: 'physics-lab',
    OS_USER_DOMAIN_NAME: 'Default',
    OS_PROJECT_DOMAIN_NAME: 'Default',
    ...extra,
  });
}

/** The one token request Keystone got, and that Leasehold got exactly the token Keystone issued. */
function sentToKeystone(): Record<string, unknown> {
  expect(keystone.tokenRequests).toHaveLength(1);
  const leaseholdRequest = api.only();
  const token = leaseholdRequest.headers['x-auth-token'] as string;
  expect(keystone.issued.has(token)).toBe(true);
  expect(leaseholdRequest.headers.authorization).toBeUndefined();
  return keystone.tokenRequests[0]!.body.auth as Record<string, unknown>;
}

function expectNoSecret(result: CliResult, ...secrets: string[]): void {
  for (const secret of [...secrets, ...keystone.issued.keys()]) {
    expect(result.stdout + result.stderr).not.toContain(secret);
  }
}

describe('the CLI gets its token from Keystone with the OS_* variables', () => {
  it('sends a password of a user and a project named in their domains, and the issued token as X-Auth-Token', async () => {
    const result = await runCli(['whoami'], aliceEnv());

    expect(result.code).toBe(0);
    expect(sentToKeystone()).toEqual({
      identity: {
        methods: ['password'],
        password: { user: { name: 'alice', domain: { name: 'Default' }, password: ALICE_PASSWORD } },
      },
      scope: { project: { name: 'physics-lab', domain: { name: 'Default' } } },
    });
    expect(keystone.issued.get(api.only().headers['x-auth-token'] as string)?.project).toEqual(PHYSICS);
    expectNoSecret(result, ALICE_PASSWORD);
  });

  it('sends ids without domains when the user and project are given by id', async () => {
    const result = await runCli(
      ['whoami'],
      env({ OS_AUTH_URL: keystone.v3, OS_USER_ID: ALICE.id, OS_PASSWORD: ALICE_PASSWORD, OS_PROJECT_ID: CHEMISTRY.id }),
    );

    expect(result.code).toBe(0);
    expect(sentToKeystone()).toEqual({
      identity: { methods: ['password'], password: { user: { id: ALICE.id, password: ALICE_PASSWORD } } },
      scope: { project: { id: CHEMISTRY.id } },
    });
  });

  it('puts names without a domain in the domain "default", as the openstack CLI does', async () => {
    const result = await runCli(
      ['whoami'],
      env({ OS_AUTH_URL: keystone.v3, OS_USERNAME: 'alice', OS_PASSWORD: ALICE_PASSWORD, OS_PROJECT_NAME: 'physics-lab' }),
    );

    expect(result.code).toBe(0);
    const auth = sentToKeystone() as { identity: { password: { user: unknown } }; scope: unknown };
    expect(auth.identity.password.user).toEqual({ name: 'alice', domain: { id: 'default' }, password: ALICE_PASSWORD });
    expect(auth.scope).toEqual({ project: { name: 'physics-lab', domain: { id: 'default' } } });
  });

  it('asks for a system-scoped token with OS_SYSTEM_SCOPE=all', async () => {
    const result = await runCli(
      ['whoami'],
      env({ OS_AUTH_URL: keystone.v3, OS_AUTH_TYPE: 'v3password', OS_USERNAME: 'admin', OS_PASSWORD: ADMIN.password, OS_SYSTEM_SCOPE: 'all' }),
    );

    expect(result.code).toBe(0);
    expect(sentToKeystone().scope).toEqual({ system: { all: true } });
    expect(keystone.issued.get(api.only().headers['x-auth-token'] as string)?.system).toBe(true);
  });

  it('sends an application credential by id with no scope of its own, even when a project is set', async () => {
    const result = await runCli(
      ['whoami'],
      env({
        OS_AUTH_URL: keystone.v3,
        OS_AUTH_TYPE: 'v3applicationcredential',
        OS_APPLICATION_CREDENTIAL_ID: APP_CREDENTIAL.id,
        OS_APPLICATION_CREDENTIAL_SECRET: APP_SECRET,
        OS_PROJECT_NAME: 'physics-lab',
      }),
    );

    expect(result.code).toBe(0);
    expect(sentToKeystone()).toEqual({
      identity: { methods: ['application_credential'], application_credential: { id: APP_CREDENTIAL.id, secret: APP_SECRET } },
    });
    // The credential's own project, not the one in the environment.
    expect(keystone.issued.get(api.only().headers['x-auth-token'] as string)?.project).toEqual(CHEMISTRY);
    expectNoSecret(result, APP_SECRET);
  });

  it('sends an application credential by name with its user, and knows one without OS_AUTH_TYPE', async () => {
    const result = await runCli(
      ['whoami'],
      env({
        OS_AUTH_URL: keystone.v3,
        OS_APPLICATION_CREDENTIAL_NAME: 'ci',
        OS_APPLICATION_CREDENTIAL_SECRET: APP_SECRET,
        OS_USERNAME: 'alice',
        OS_USER_DOMAIN_ID: 'default',
      }),
    );

    expect(result.code).toBe(0);
    expect(sentToKeystone().identity).toEqual({
      methods: ['application_credential'],
      application_credential: { name: 'ci', user: { name: 'alice', domain: { id: 'default' } }, secret: APP_SECRET },
    });
  });

  it('exchanges OS_TOKEN for a project-scoped token with OS_AUTH_TYPE=token', async () => {
    // A token alice got elsewhere (e.g. from `openstack token issue`), for another project.
    const elsewhere = 'gAAAAABtoken-from-elsewhere-0123456789';
    keystone.issued.set(elsewhere, { user: ALICE, project: CHEMISTRY, system: false });

    const result = await runCli(
      ['whoami'],
      env({ OS_AUTH_URL: keystone.v3, OS_AUTH_TYPE: 'token', OS_TOKEN: elsewhere, OS_PROJECT_ID: PHYSICS.id }),
    );

    expect(result.code).toBe(0);
    expect(keystone.tokenRequests).toHaveLength(1);
    expect(keystone.tokenRequests[0]!.body.auth).toEqual({
      identity: { methods: ['token'], token: { id: elsewhere } },
      scope: { project: { id: PHYSICS.id } },
    });
    const sent = api.only().headers['x-auth-token'] as string;
    expect(sent).not.toBe(elsewhere);
    expect(keystone.issued.get(sent)?.project).toEqual(PHYSICS);
    expect(result.stdout + result.stderr).not.toContain(elsewhere);
  });

  it.each([
    ['without /v3', (k: FakeKeystone) => k.url],
    ['with /v3/', (k: FakeKeystone) => `${k.v3}/`],
    ['with /v2.0', (k: FakeKeystone) => `${k.url}/v2.0`],
  ])('accepts an auth URL %s and posts to /v3/auth/tokens', async (_, authUrl) => {
    const result = await runCli(['whoami'], aliceEnv({ OS_AUTH_URL: authUrl(keystone) }));
    expect(result.code).toBe(0);
    expect(keystone.tokenRequests).toHaveLength(1);
  });
});

describe('Keystone errors and bad credentials', () => {
  it('exits 1 naming user@project when Keystone refuses the password, and never prints the password', async () => {
    const result = await runCli(['node', 'list'], aliceEnv({ OS_PASSWORD: 'wrong-password-123' }));

    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`error: Keystone refused the credentials of alice@physics-lab (${keystone.v3})\n`);
    expect(api.requests).toHaveLength(0);
    expectNoSecret(result, 'wrong-password-123', ALICE_PASSWORD);
  });

  it('exits 1 naming the application credential when Keystone refuses its secret', async () => {
    const result = await runCli(
      ['whoami'],
      env({ OS_AUTH_URL: keystone.v3, OS_APPLICATION_CREDENTIAL_ID: APP_CREDENTIAL.id, OS_APPLICATION_CREDENTIAL_SECRET: 'not-the-secret-42' }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`Keystone refused the credentials of application credential ${APP_CREDENTIAL.id}`);
    expectNoSecret(result, 'not-the-secret-42');
  });

  it('exits 3 with the Keystone URL when Keystone cannot be reached', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));

    const result = await runCli(['whoami'], aliceEnv({ OS_AUTH_URL: `http://127.0.0.1:${port}/identity` }));

    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(new RegExp(`^error: cannot reach Keystone at http://127.0.0.1:${port}/identity/v3: .*ECONNREFUSED`));
    expectNoSecret(result, ALICE_PASSWORD);
  });

  it('exits 1 with the status when Keystone fails, and 1 when the URL is not a Keystone', async () => {
    keystone.failWith = 500;
    const failed = await runCli(['whoami'], aliceEnv());
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(`Keystone at ${keystone.v3} did not issue a token for alice@physics-lab: HTTP 500`);

    const notKeystone = await runCli(['whoami'], aliceEnv({ OS_AUTH_URL: api.url }));
    expect(notKeystone.code).toBe(1);
    expect(notKeystone.stderr).toContain(`${api.url}/v3 has no Keystone v3 token API`);
  });

  it.each([
    [{ OS_PASSWORD: '' }, 'Keystone password authentication needs a password (OS_PASSWORD or auth.password)'],
    [{ OS_USERNAME: '' }, 'Keystone password authentication needs a user (OS_USERNAME or OS_USER_ID'],
    [{ OS_AUTH_TYPE: 'v3oidcpassword' }, 'the Keystone auth type "v3oidcpassword" is not supported; use one of password, v3password'],
    [{ OS_SYSTEM_SCOPE: 'all' }, 'give a project or a system scope (OS_SYSTEM_SCOPE), not both'],
    [{ OS_AUTH_URL: 'keystone.example.org' }, 'the Keystone auth URL "keystone.example.org" is not a URL'],
  ])('is a usage error (exit 2) asking nothing of Keystone with %j', async (change, message) => {
    const result = await runCli(['whoami'], aliceEnv(change));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(keystone.requests).toHaveLength(0);
    expectNoSecret(result, ALICE_PASSWORD);
  });
});
