import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { serveCommand } from '../../src/server/serve-command.js';
import { FakeApi } from './helpers/fake-api.js';
import { runCli } from './helpers/cli-runner.js';
import { me } from './helpers/fixtures.js';

// `serve` runs the real server; here only the hand-over of the flags is under test.
vi.mock('../../src/server/serve-command.js', () => ({ serveCommand: vi.fn(async () => {}) }));

const SECRET = 'lh_very-secret-token-0123456789';
const NO_CONFIG = { LEASEHOLD_CONFIG: '/nonexistent/leasehold.json' };

async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

describe('when the server cannot be reached', () => {
  it('exits 3 with a message naming the URL and never the token', async () => {
    const url = await closedPortUrl();
    const result = await runCli(['node', 'list', '--url', url, '--token', SECRET], NO_CONFIG);

    expect(result.code).toBe(3);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(new RegExp(`^error: cannot reach the Leasehold server at ${url}: .*ECONNREFUSED`));
    expect(result.stderr).not.toContain(SECRET);
  });

  it('refuses a URL with a password (exit 2) without printing it', async () => {
    const result = await runCli(['whoami', '--url', 'http://bob:hunter2@127.0.0.1:9/lh', '--token', SECRET], NO_CONFIG);
    expect(result).toMatchObject({
      code: 2,
      stderr: 'error: the server URL http://127.0.0.1:9/lh must not contain a user name or password; use a token\n',
    });
  });

  it('refuses a URL that is not http(s) with exit 2', async () => {
    const result = await runCli(['whoami', '--url', 'ftp://example.org'], NO_CONFIG);
    expect(result).toMatchObject({ code: 2, stderr: 'error: the server URL ftp://example.org must start with http:// or https://\n' });
  });
});

describe('when the server answers something that is not the API', () => {
  let api: FakeApi;
  beforeEach(async () => {
    api = await new FakeApi().start();
  });
  afterEach(() => api.stop());

  it('reports an HTML error page by its HTTP status and exits 1', async () => {
    api.on('GET', '/v1/me', { status: 502, raw: '<html>Bad Gateway</html>' });
    const result = await runCli(['whoami', '--url', api.url, '--token', SECRET], NO_CONFIG);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`error: ${api.url} answered HTTP 502 Bad Gateway without a Leasehold error body (http_502, HTTP 502)\n`);
  });

  it('reports a success that is not JSON and exits 1', async () => {
    api.on('GET', '/v1/me', { status: 200, raw: '<html>hello</html>' });
    const result = await runCli(['whoami', '--url', api.url, '--token', SECRET], NO_CONFIG);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('with something that is not JSON; is it a Leasehold server?');
  });

  it('asks for JSON', async () => {
    api.on('GET', '/v1/me', { status: 200, body: me });
    await runCli(['whoami', '--url', api.url, '--token', SECRET], NO_CONFIG);
    expect(api.only().headers.accept).toBe('application/json');
  });
});

describe('secrets never printed', () => {
  it('redacts the token even where commander echoes an argument', async () => {
    const result = await runCli(['--token', SECRET, 'node', 'list', '--limit', SECRET], NO_CONFIG);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("argument '***' is invalid");
    expect(result.stderr).not.toContain(SECRET);
  });

  it('refuses a token that cannot go in a header without quoting it', async () => {
    const result = await runCli(['whoami', '--url', 'http://127.0.0.1:9'], { ...NO_CONFIG, LEASEHOLD_TOKEN: 'lh_abc def' });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('error: the token contains spaces or characters that cannot be sent in an HTTP header\n');
  });
});

describe('help and usage errors', () => {
  it('--help prints the commands, settings and exit codes to stdout and exits 0', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    for (const text of ['Usage: leasehold', 'serve', 'login', 'project', 'node', 'LEASEHOLD_TOKEN', 'Exit codes']) {
      expect(result.stdout).toContain(text);
    }
  });

  it('per-command help shows the options and the global ones', async () => {
    const result = await runCli(['node', 'list', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: leasehold node list [options]');
    expect(result.stdout).toContain('--resource-class <class>');
    expect(result.stdout).toContain('Global Options:');
    expect(result.stdout).toContain('--json');
    expect((await runCli(['help', 'token'])).stdout).toContain('Usage: leasehold token [options] [command]');
  });

  it('a command group without a subcommand shows its help on stderr and exits 2', async () => {
    const result = await runCli(['project']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Usage: leasehold project');
  });

  it('an unknown command or option exits 2 with a suggestion', async () => {
    const command = await runCli(['nodes', 'list']);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain("error: unknown command 'nodes'");
    expect(command.stderr).toContain('(Did you mean node?)');
    const option = await runCli(['node', 'list', '--ownr', 'x']);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("error: unknown option '--ownr'");
  });

  it('a missing argument exits 2', async () => {
    const result = await runCli(['project', 'show']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("error: missing required argument 'project'");
  });

  it('--version prints the package version', async () => {
    const result = await runCli(['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe('leasehold serve', () => {
  beforeEach(() => vi.mocked(serveCommand).mockClear());

  it('hands --port and --host to the server', async () => {
    const result = await runCli(['serve', '--port', '0', '--host', '0.0.0.0']);
    expect(result.code).toBe(0);
    expect(serveCommand).toHaveBeenCalledWith({ port: 0, host: '0.0.0.0' });
  });

  it('leaves unset flags to the server configuration', async () => {
    await runCli(['serve']);
    expect(serveCommand).toHaveBeenCalledWith({ port: undefined, host: undefined });
  });

  it.each(['65536', '-1', '80x', '1.5', ''])('refuses --port %j with exit 2', async (port) => {
    const result = await runCli(['serve', '--port', port]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("option '--port <n>' argument");
    expect(serveCommand).not.toHaveBeenCalled();
  });

  it('exits 1 with the message when the server fails to start', async () => {
    vi.mocked(serveCommand).mockRejectedValueOnce(new Error('LEASEHOLD_DRIVER: must be "simulated" or "ironic"'));
    const result = await runCli(['serve']);
    expect(result).toMatchObject({ code: 1, stderr: 'error: LEASEHOLD_DRIVER: must be "simulated" or "ironic"\n' });
  });
});

describe('under --json, a failure is JSON on stdout too (the API error shape), with the same exit code', () => {
  let api: FakeApi;
  beforeEach(async () => {
    api = await new FakeApi().start();
  });
  afterEach(() => api.stop());

  it("a server refusal prints the server's code, message and details, and exits 1", async () => {
    // A full id goes to the server as it is: the refusal is the server's own.
    const gone = '00000000-0000-4000-8000-00000000dead';
    api.on('GET', `/v1/leases/${gone}`, { status: 404, body: { error: { code: 'not_found', message: `lease "${gone}" not found`, details: { resource: 'lease', id: gone } } } });
    const result = await runCli(['lease', 'show', gone, '--json', '--url', api.url, '--token', SECRET], NO_CONFIG);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({ error: { code: 'not_found', message: `lease "${gone}" not found`, details: { resource: 'lease', id: gone } } });
    expect(result.stderr).toContain(`lease "${gone}" not found`);
  });

  it('no server to talk to is code unreachable and exit 3; a wrong command line is code usage and exit 2', async () => {
    const url = await closedPortUrl();
    const down = await runCli(['--json', 'node', 'list', '--url', url, '--token', SECRET], NO_CONFIG);
    expect(down.code).toBe(3);
    expect(JSON.parse(down.stdout).error).toMatchObject({ code: 'unreachable', message: expect.stringContaining(url) });
    expect(down.stdout).not.toContain(SECRET);
    const usage = await runCli(['--json', 'lease', 'show'], NO_CONFIG);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stdout).error).toMatchObject({ code: 'usage', message: expect.stringContaining('missing required argument') });
  });

  it('without --json stdout stays empty on a failure', async () => {
    const result = await runCli(['lease', 'show'], NO_CONFIG);
    expect(result).toMatchObject({ code: 2, stdout: '' });
  });
});
