import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configPath, resolveSettings } from '../../src/cli/config.js';
import { apiError, FakeApi } from './helpers/fake-api.js';
import { runCli, tempDir } from './helpers/cli-runner.js';
import { me, adminMe } from './helpers/fixtures.js';

const TOKEN = 'lh_secret-token-value-0123456789';

let api: FakeApi;
let dir: string;
let cleanup: () => Promise<void>;
let config: string;

beforeEach(async () => {
  api = await new FakeApi().on('GET', '/v1/me', { status: 200, body: me }).start();
  ({ dir, cleanup } = await tempDir());
  config = join(dir, 'conf', 'leasehold', 'config.json');
});

afterEach(async () => {
  await api.stop();
  await cleanup();
});

describe('leasehold login', () => {
  it('checks the pair with GET /v1/me, then saves it with mode 0600 in a 0700 directory', async () => {
    const result = await runCli(['login', '--url', api.url, '--token', TOKEN], { LEASEHOLD_CONFIG: config });

    expect(result.code).toBe(0);
    const request = api.only();
    expect(request.method).toBe('GET');
    expect(request.path).toBe('/v1/me');
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(JSON.parse(await readFile(config, 'utf8'))).toEqual({ url: api.url, token: TOKEN });
    expect((await stat(config)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'conf', 'leasehold'))).mode & 0o777).toBe(0o700);
    expect(result.stdout).toBe(`Logged in to ${api.url} as alice (member in project physics-lab).\n`);
    expect(result.stderr).toContain(`Saved the URL and token to ${config}`);
    expect(result.stdout + result.stderr).not.toContain(TOKEN);
  });

  it('writes to $XDG_CONFIG_HOME/leasehold/config.json when LEASEHOLD_CONFIG is not set', async () => {
    const result = await runCli(['login', '--url', api.url, '--token', TOKEN], { XDG_CONFIG_HOME: join(dir, 'xdg') });
    expect(result.code).toBe(0);
    expect(JSON.parse(await readFile(join(dir, 'xdg', 'leasehold', 'config.json'), 'utf8')).token).toBe(TOKEN);
  });

  it('defaults to ~/.config/leasehold/config.json', () => {
    expect(configPath({ HOME: '/home/ann' })).toBe('/home/ann/.config/leasehold/config.json');
  });

  it('saves nothing and exits 1 when the server refuses the token, without printing the token', async () => {
    api.on('GET', '/v1/me', apiError(401, 'unauthenticated', 'the token is not valid'));
    const result = await runCli(['login', '--url', api.url, '--token', TOKEN], { LEASEHOLD_CONFIG: config });

    expect(result.code).toBe(1);
    expect(result.stderr).toBe('error: the token is not valid (unauthenticated, HTTP 401)\n');
    await expect(stat(config)).rejects.toThrow(/ENOENT/);
    expect(result.stdout + result.stderr).not.toContain(TOKEN);
  });

  it('is a usage error (exit 2) without a token', async () => {
    const result = await runCli(['login', '--url', api.url], { LEASEHOLD_CONFIG: config });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('login needs a token');
    expect(api.requests).toHaveLength(0);
  });

  it('with --json prints the /v1/me answer', async () => {
    const result = await runCli(['login', '--json', '--url', api.url, '--token', TOKEN], { LEASEHOLD_CONFIG: config });
    expect(JSON.parse(result.stdout)).toEqual(me);
  });
});

describe('leasehold logout', () => {
  it('removes the config file, and says so when there was none', async () => {
    await runCli(['login', '--url', api.url, '--token', TOKEN], { LEASEHOLD_CONFIG: config });

    const first = await runCli(['logout'], { LEASEHOLD_CONFIG: config });
    expect(first.code).toBe(0);
    expect(first.stderr).toBe(`Removed ${config}\n`);
    await expect(stat(config)).rejects.toThrow(/ENOENT/);

    const second = await runCli(['logout'], { LEASEHOLD_CONFIG: config });
    expect(second.code).toBe(0);
    expect(second.stderr).toBe(`Not logged in (no ${config})\n`);
  });
});

describe('leasehold whoami and where settings come from', () => {
  async function saveConfig(url: string, token: string): Promise<void> {
    await mkdir(join(dir, 'conf', 'leasehold'), { recursive: true });
    await writeFile(config, JSON.stringify({ url, token }));
  }

  it('uses the saved URL and token after login', async () => {
    await saveConfig(api.url, 'lh_from-config');
    const result = await runCli(['whoami'], { LEASEHOLD_CONFIG: config });

    expect(result.code).toBe(0);
    expect(api.only().headers.authorization).toBe('Bearer lh_from-config');
    expect(result.stdout).toBe(
      [
        'FIELD       VALUE',
        'user        alice',
        `user id     ${me.user.id}`,
        'role        member',
        `project     physics-lab (${me.project.id})`,
        `server      ${api.url} (from config file)`,
        'token from  config file',
        '',
      ].join('\n'),
    );
  });

  it('prefers LEASEHOLD_URL and LEASEHOLD_TOKEN over the config file', async () => {
    await saveConfig('http://127.0.0.1:9', 'lh_from-config');
    const result = await runCli(['whoami'], { LEASEHOLD_CONFIG: config, LEASEHOLD_URL: api.url, LEASEHOLD_TOKEN: 'lh_from-env' });

    expect(result.code).toBe(0);
    expect(api.only().headers.authorization).toBe('Bearer lh_from-env');
    expect(result.stdout).toContain(`(from LEASEHOLD_URL)`);
    expect(result.stdout).toContain('token from  LEASEHOLD_TOKEN');
  });

  it('prefers --url and --token over the environment and the config file', async () => {
    await saveConfig('http://127.0.0.1:9', 'lh_from-config');
    const result = await runCli(['whoami', '--url', api.url, '--token', 'lh_from-flag'], {
      LEASEHOLD_CONFIG: config,
      LEASEHOLD_URL: 'http://127.0.0.1:9',
      LEASEHOLD_TOKEN: 'lh_from-env',
    });

    expect(result.code).toBe(0);
    expect(api.only().headers.authorization).toBe('Bearer lh_from-flag');
    expect(result.stdout).toContain('token from  --token');
  });

  it('uses the saved token with the saved server when only the URL variable repeats it', async () => {
    await saveConfig(`${api.url}/`, 'lh_from-config');
    const result = await runCli(['whoami'], { LEASEHOLD_CONFIG: config, LEASEHOLD_URL: api.url });
    expect(result.code).toBe(0);
    expect(api.only().headers.authorization).toBe('Bearer lh_from-config');
  });

  it('never sends the saved token to a different server named by LEASEHOLD_URL', async () => {
    await saveConfig('http://127.0.0.1:9', 'lh_from-config');
    api.on('GET', '/v1/me', apiError(401, 'unauthenticated', 'a token is required'));
    const result = await runCli(['whoami'], { LEASEHOLD_CONFIG: config, LEASEHOLD_URL: api.url });
    expect(result.code).toBe(1);
    expect(api.only().headers.authorization).toBeUndefined();
  });

  it('falls back to http://127.0.0.1:8080 with no token when nothing is configured', async () => {
    const settings = await resolveSettings({}, { LEASEHOLD_CONFIG: config });
    expect(settings).toMatchObject({ url: 'http://127.0.0.1:8080', urlSource: 'default', token: undefined });
  });

  it('sends no Authorization header without a token and says how to give one on 401', async () => {
    api.on('GET', '/v1/me', apiError(401, 'unauthenticated', 'a token is required'));
    const result = await runCli(['whoami'], { LEASEHOLD_CONFIG: config, LEASEHOLD_URL: api.url });

    expect(result.code).toBe(1);
    expect(api.only().headers.authorization).toBeUndefined();
    expect(result.stderr).toContain('a token is required; no token was sent: use --token, LEASEHOLD_TOKEN or `leasehold login`');
  });

  it('shows an admin without a project', async () => {
    api.on('GET', '/v1/me', { status: 200, body: adminMe });
    const result = await runCli(['whoami', '--url', api.url, '--token', TOKEN], { LEASEHOLD_CONFIG: config });
    expect(result.stdout).toMatch(/^project {5}-$/m);
    expect(result.stdout).toMatch(/^role {8}admin$/m);
  });

  it('refuses a damaged config file with exit 2 and names the file', async () => {
    await mkdir(join(dir, 'conf', 'leasehold'), { recursive: true });
    await writeFile(config, '{not json');
    const result = await runCli(['whoami'], { LEASEHOLD_CONFIG: config });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`the config file ${config} is not valid JSON`);
  });
});
