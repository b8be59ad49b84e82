import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/run.js';
import { createProjectUser } from '../support/test-app.js';
import { GPU, startConsoleServer, type ConsoleServer } from './console-harness.js';

let t: ConsoleServer;
let owner: { token: string };
let lessee: { token: string };
let stranger: { token: string };

beforeEach(async () => {
  t = await startConsoleServer();
  owner = await createProjectUser(t, 'physics-lab', 'member');
  lessee = await createProjectUser(t, 'bio-lab', 'member');
  stranger = await createProjectUser(t, 'geo', 'member');
  expect((await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: 'gpu-01' } })).status).toBe(201);
  await t.driver.setConsoleEnabled(GPU, true);
  await t.clock.advance(10);
});
afterEach(() => t.close());

/** A fake terminal: what the CLI would read from the keyboard, with raw-mode calls recorded. */
function terminal(tty = false) {
  const stdin = Object.assign(new PassThrough(), {
    isTTY: tty,
    rawModes: [] as boolean[],
    setRawMode(mode: boolean) {
      stdin.rawModes.push(mode);
      return stdin;
    },
  });
  return stdin;
}

/** Runs `leasehold console ...` in-process; its output can be watched while it runs. */
function cli(argv: string[], token: string, stdin: ReturnType<typeof terminal>) {
  let stdout = '';
  let stderr = '';
  const code = run(['console', ...argv], {
    stdout: { write: (chunk: string | Uint8Array) => (stdout += Buffer.from(chunk as Uint8Array).toString('utf8')) },
    stderr: { write: (chunk: string) => (stderr += chunk) },
    env: { LEASEHOLD_URL: t.url, LEASEHOLD_TOKEN: token, LEASEHOLD_CONFIG: '/nonexistent/leasehold.json' },
    stdin,
  });
  return {
    code,
    stdout: () => stdout,
    stderr: () => stderr,
    async until(predicate: (out: string) => boolean, timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(stdout)) {
        if (Date.now() > deadline) throw new Error(`not seen within ${timeoutMs} ms; stdout ${JSON.stringify(stdout)}, stderr ${JSON.stringify(stderr)}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

async function lease(duration = '1h'): Promise<{ id: string; end: string }> {
  const res = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: ['gpu-01'], duration } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

describe('leasehold console', () => {
  it('attaches the terminal in raw mode, passes keystrokes and output, detaches on Ctrl-] with exit 0 and restores the terminal', async () => {
    await lease();
    const stdin = terminal(true);
    const run = cli(['gpu-01'], lessee.token, stdin);
    await run.until((out) => out.includes('login: '));
    expect(run.stderr()).toContain("Escape character is '^]' (Ctrl-])");
    expect(stdin.rawModes).toEqual([true]);
    stdin.write('root\r');
    await run.until((out) => out.includes('root\r\nPassword: '));
    stdin.write('\x03'); // Ctrl-C goes to the node, it does not stop the CLI
    await run.until((out) => out.includes('^C'));
    stdin.write('\x1d');
    expect(await run.code).toBe(0);
    expect(stdin.rawModes).toEqual([true, false]);
    expect(run.stderr()).toContain('[detached]');
    // The console token was revoked on the way out: its URL opens nothing any more.
    const events = await t.request('GET', `/v1/events?node_id=${GPU}&type=console.token_revoked`);
    expect(events.body.events).toHaveLength(1);
  });

  it('detaches a second after piped input ends, having shown the answer', async () => {
    await lease();
    const stdin = terminal(false);
    const run = cli(['gpu-01'], lessee.token, stdin);
    await run.until((out) => out.includes('login: '));
    stdin.end('root\r');
    expect(await run.code).toBe(0);
    expect(run.stdout()).toContain('Password: ');
    expect(stdin.rawModes).toEqual([]);
  });

  it("refuses a third party with the server's 404 and exit 1", async () => {
    await lease();
    const run = cli(['gpu-01'], stranger.token, terminal(true));
    expect(await run.code).toBe(1);
    expect(run.stderr()).toMatch(/error: node "gpu-01" not found \(not_found, HTTP 404\)/);
  });

  it('exits 1 with the reason when the lease ends, and restores the terminal', async () => {
    const { end } = await lease('5m');
    const stdin = terminal(true);
    const run = cli(['gpu-01'], lessee.token, stdin);
    await run.until((out) => out.includes('login: '));
    await t.clock.advanceTo(end);
    expect(await run.code).toBe(1);
    expect(run.stderr()).toContain(`error: the console was closed by the server: the lease ended at ${end} (code 4410)`);
    expect(stdin.rawModes).toEqual([true, false]);
  });

  it('says the console was refused when its token no longer works', async () => {
    await lease();
    const stdin = terminal(false);
    // Revoke every console token the moment it is issued: the connection is refused at once.
    const original = t.store.consoles.create.bind(t.store.consoles);
    t.store.consoles.create = async (...args) => {
      const token = await original(...args);
      await t.store.consoles.revoke(token.id, [], t.clock.now());
      return token;
    };
    const run = cli(['gpu-01'], lessee.token, stdin);
    expect(await run.code).toBe(1);
    expect(run.stderr()).toMatch(/error: the console was refused: the console token was revoked at .* \(code 4401\)/);
    expect(run.stderr()).not.toContain('lhc_');
  });
});
