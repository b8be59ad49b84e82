import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createProjectUser } from '../support/test-app.js';
import { connect, GPU, STORE, startConsoleServer, type ConsoleServer } from './console-harness.js';
import { PROMPTLY_MS } from '../support/timing.js';

const MINUTE = 60_000;

let t: ConsoleServer;
let owner: { projectId: string; token: string };
let lessee: { projectId: string; token: string };
let stranger: { projectId: string; token: string };

async function setup(options: Parameters<typeof startConsoleServer>[0] = {}) {
  t = await startConsoleServer(options);
  owner = await createProjectUser(t, 'physics-lab', 'member');
  lessee = await createProjectUser(t, 'bio-lab', 'member');
  stranger = await createProjectUser(t, 'geo', 'member');
  for (const node of ['gpu-01', 'store-01']) {
    const offer = await t.request('POST', '/v1/offers', { token: owner.token, body: { node_id: node } });
    expect(offer.status, JSON.stringify(offer.body)).toBe(201);
  }
}

/** A lease of `node` for the lessee, from now. */
async function lease(node = 'gpu-01', duration = '1h'): Promise<{ id: string; end: string }> {
  const res = await t.request('POST', '/v1/leases', { token: lessee.token, body: { nodes: [node], duration } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function consoleFor(token: string, node = 'gpu-01') {
  const res = await t.request('POST', `/v1/nodes/${node}/console`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; url: string; expires_at: string; node_id: string };
}

async function enableConsole(nodeId = GPU) {
  await t.driver.setConsoleEnabled(nodeId, true);
  await t.clock.advance(10);
}

afterEach(async () => {
  await t?.close();
});

describe('the serial console during a lease', () => {
  beforeEach(() => setup());

  it('gives the lessee a ws:// URL with a single-node token that expires in 10 minutes', async () => {
    await lease();
    const res = await t.request('POST', '/v1/nodes/gpu-01/console', { token: lessee.token });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ node_id: GPU, expires_at: '2030-01-01T00:10:00.000Z', revoked_at: null });
    const url = new URL(res.body.url);
    expect(url.protocol).toBe('ws:');
    expect(url.host).toBe(new URL(t.url).host);
    expect(url.pathname).toBe(`/v1/consoles/${res.body.id}/stream`);
    expect(url.searchParams.get('token')).toMatch(/^lhc_[A-Za-z0-9_-]{43}$/);
    // Only the hash is stored, and the token is shown once: never in GET.
    const shown = await t.request('GET', `/v1/consoles/${res.body.id}`, { token: lessee.token });
    expect(shown.status).toBe(200);
    expect(JSON.stringify(shown.body)).not.toContain(url.searchParams.get('token'));
  });

  it('shows the console output to the lessee and echoes what it types', async () => {
    await lease();
    await enableConsole();
    const client = connect((await consoleFor(lessee.token)).url);
    await client.waitFor((out) => out.includes('[Leasehold simulated serial console: gpu-01') && out.includes('login: '));
    client.send('root\r');
    await client.waitFor((out) => out.includes('root\r\nPassword: '));
    client.send('hunter2\r');
    await client.waitFor((out) => out.includes('Login incorrect'));
    expect(client.output()).not.toContain('hunter2'); // the getty does not echo passwords
    client.ws.close(1000);
    expect((await client.closed).code).toBe(1000);
  });

  it('turns the console on when it is off, saying so, then connects', async () => {
    await lease();
    const client = connect((await consoleFor(lessee.token)).url);
    await t.advanceUntil(() => client.output().includes('login: '));
    expect(client.notices().join('')).toMatch(/^\[leasehold\] the serial console of gpu-01 is off: turning it on/);
    expect((await t.driver.getConsole(GPU)).enabled).toBe(true);
    client.ws.close();
  });

  it('cuts the connection at the instant the lease ends, with 4410 and the reason', async () => {
    // Short, because the manual clock runs every one-second re-check on the way to the end.
    const { end } = await lease('gpu-01', '5m');
    await enableConsole();
    const client = connect((await consoleFor(lessee.token)).url);
    await client.waitFor((out) => out.includes('login: '));
    await t.clock.advanceTo(new Date(Date.parse(end) - 1));
    await new Promise((r) => setTimeout(r, 50));
    expect(client.isClosed()).toBe(false);

    const before = Date.now();
    await t.clock.advanceTo(end);
    const closed = await client.closed;
    expect(closed.code).toBe(4410);
    expect(closed.reason).toBe(`the lease ended at ${end}`);
    expect(closed.at - before).toBeLessThan(PROMPTLY_MS);
    // Afterwards the lessee cannot get a console for it at all.
    expect((await t.request('POST', '/v1/nodes/gpu-01/console', { token: lessee.token })).status).toBe(404);
  });

  it('keeps the connection past the old end of a lease that was extended, and cuts it at the new end', async () => {
    const { id, end } = await lease('gpu-01', '5m');
    await enableConsole();
    const client = connect((await consoleFor(lessee.token)).url);
    await client.waitFor((out) => out.includes('login: '));
    const newEnd = new Date(Date.parse(end) + 2 * MINUTE).toISOString();
    const extended = await t.request('PATCH', `/v1/leases/${id}`, { token: lessee.token, body: { end: newEnd } });
    expect(extended.status, JSON.stringify(extended.body)).toBe(200);
    await t.clock.advanceTo(new Date(Date.parse(end) + 1_000));
    await new Promise((r) => setTimeout(r, 50));
    expect(client.isClosed()).toBe(false);
    await t.clock.advanceTo(newEnd);
    expect(await client.closed).toMatchObject({ code: 4410, reason: `the lease ended at ${newEnd}` });
  });

  it("keeps the owner's console open when the lessee's lease ends", async () => {
    const { end } = await lease('gpu-01', '5m');
    await enableConsole();
    const theirs = connect((await consoleFor(lessee.token)).url);
    const mine = connect((await consoleFor(owner.token)).url);
    await theirs.waitFor((out) => out.includes('login: '));
    await mine.waitFor((out) => out.includes('login: '));
    await t.clock.advanceTo(end);
    expect((await theirs.closed).code).toBe(4410);
    await t.clock.advance(2_000);
    await new Promise((r) => setTimeout(r, 50));
    expect(mine.isClosed()).toBe(false);
    mine.send('\r');
    await mine.waitFor((out) => out.split('login: ').length > 2);
    mine.ws.close();
  });

  it('cuts the connection within a second when the lease is ended early', async () => {
    const l = await lease('gpu-01', '1h');
    await enableConsole();
    const client = connect((await consoleFor(lessee.token)).url);
    await client.waitFor((out) => out.includes('login: '));
    const ended = await t.request('DELETE', `/v1/leases/${l.id}`, { token: lessee.token });
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    await t.clock.advance(1_000);
    const closed = await client.closed;
    expect(closed.code).toBe(4410);
  });

  it("answers a third party's request with 404, and a reader's with 403", async () => {
    await lease();
    const third = await t.request('POST', '/v1/nodes/gpu-01/console', { token: stranger.token });
    expect(third.status).toBe(404);
    expect(third.body.error.code).toBe('not_found');
    const reader = await createProjectUser(t, 'bio-lab', 'reader');
    expect((await t.request('POST', '/v1/nodes/gpu-01/console', { token: reader.token })).status).toBe(403);
    // Without a lease on it, the lessee does not see the other node either.
    expect((await t.request('POST', '/v1/nodes/store-01/console', { token: lessee.token })).status).toBe(404);
  });

  it("lets the owner and the operator use the console of the owner's node, a lease or not", async () => {
    await enableConsole(STORE);
    for (const token of [owner.token, undefined]) {
      const res = await t.request('POST', '/v1/nodes/store-01/console', { token });
      expect(res.status).toBe(201);
      const client = connect(res.body.url);
      await client.waitFor((out) => out.includes('login: '));
      client.ws.close();
    }
  });

  it('refuses an expired token with 4401', async () => {
    await lease();
    await enableConsole();
    const { url, expires_at } = await consoleFor(lessee.token);
    await t.clock.advanceTo(expires_at);
    const client = connect(url);
    const closed = await client.closed;
    expect(closed.code).toBe(4401);
    expect(closed.reason).toContain(`expired at ${expires_at}`);
    expect(client.output()).toBe('');
  });

  it('refuses an unknown token, a token for another console, and none at all with 4401', async () => {
    await lease();
    const { id, url } = await consoleFor(lessee.token);
    const other = await consoleFor(owner.token, 'store-01');
    const token = new URL(url).searchParams.get('token')!;
    const base = url.replace(/\?.*$/, '');
    for (const bad of [`${base}?token=lhc_${'x'.repeat(43)}`, base, other.url.replace(other.id, id).replace(/token=.*/, `token=${token}x`), url.replace(id, other.id)]) {
      const closed = await connect(bad).closed;
      expect(closed.code, bad).toBe(4401);
    }
  });

  it('refuses a revoked token, and revoking it closes its open connection with 4401 at once', async () => {
    await lease();
    await enableConsole();
    const first = await consoleFor(lessee.token);
    const client = connect(first.url);
    await client.waitFor((out) => out.includes('login: '));
    const revoked = await t.request('DELETE', `/v1/consoles/${first.id}`, { token: lessee.token });
    expect(revoked.status).toBe(204);
    const closed = await client.closed;
    expect(closed).toMatchObject({ code: 4401, reason: 'the console token was revoked' });
    const again = await connect(first.url).closed;
    expect(again.code).toBe(4401);
    expect(again.reason).toMatch(/revoked at 2030-01-01T00:00:00.010Z/);
    expect((await t.request('GET', `/v1/consoles/${first.id}`, { token: lessee.token })).body.revoked_at).toBe('2030-01-01T00:00:00.010Z');
  });

  it('closes an open connection within a second when its token is revoked elsewhere (another replica)', async () => {
    await lease();
    await enableConsole();
    const { id, url } = await consoleFor(lessee.token);
    const client = connect(url);
    await client.waitFor((out) => out.includes('login: '));
    // Straight in the store, as another replica's DELETE would: this process is not told.
    await t.store.consoles.revoke(id, [], t.clock.now());
    await new Promise((r) => setTimeout(r, 50));
    expect(client.isClosed()).toBe(false);
    await t.clock.advance(1_000);
    expect((await client.closed).code).toBe(4401);
  });

  it('lets the creator, the owner and the operator revoke a console token, and nobody else see it', async () => {
    await lease();
    const { id } = await consoleFor(lessee.token);
    expect((await t.request('GET', `/v1/consoles/${id}`, { token: stranger.token })).status).toBe(404);
    expect((await t.request('DELETE', `/v1/consoles/${id}`, { token: stranger.token })).status).toBe(404);
    expect((await t.request('GET', `/v1/consoles/${id}`, { token: owner.token })).status).toBe(200);
    expect((await t.request('DELETE', `/v1/consoles/${id}`, { token: owner.token })).status).toBe(204);
    expect((await t.request('DELETE', `/v1/consoles/${id}`)).status).toBe(204); // again, as the operator: idempotent
    expect((await t.request('GET', '/v1/consoles/not-a-uuid')).status).toBe(404);
  });

  it('does not accept a console token as an API token', async () => {
    await lease();
    const token = new URL((await consoleFor(lessee.token)).url).searchParams.get('token')!;
    expect((await t.request('GET', '/v1/me', { token })).status).toBe(401);
    expect((await t.request('GET', '/v1/nodes', { token })).status).toBe(401);
  });

  it('records who used which console, how it ended, and never the token', async () => {
    await lease();
    await enableConsole();
    const { id, url } = await consoleFor(lessee.token);
    const client = connect(url);
    await client.waitFor((out) => out.includes('login: '));
    client.ws.close(1000, 'bye');
    await client.closed;
    await new Promise((r) => setTimeout(r, 50));
    const events = await t.request('GET', `/v1/events?node_id=${GPU}`, { token: lessee.token });
    const mine = events.body.events.filter((e: { type: string }) => e.type.startsWith('console.')).reverse();
    expect(mine.map((e: { type: string }) => e.type)).toEqual(['console.token_issued', 'console.connected', 'console.disconnected']);
    expect(mine[2].details).toMatchObject({ console_id: id, code: 1000, by: 'client' });
    expect(JSON.stringify(events.body)).not.toContain(new URL(url).searchParams.get('token'));
  });
});

describe('the console proxy', () => {
  it('never writes a console token to the log', async () => {
    let log = '';
    await setup({ logTo: new Writable({ write: (chunk, _enc, done) => ((log += String(chunk)), done()) }) });
    await lease();
    await enableConsole();
    const { url } = await consoleFor(lessee.token);
    const client = connect(url);
    await client.waitFor((out) => out.includes('login: '));
    client.ws.close();
    await connect(url.replace(/token=.*/, 'token=lhc_wrong')).closed;
    await client.closed;
    expect(log).toContain('console connected');
    expect(log).not.toContain(new URL(url).searchParams.get('token'));
    expect(log).not.toContain('lhc_wrong');
  });

  it('builds wss:// URLs from LEASEHOLD_PUBLIC_URL, under its path', async () => {
    await setup({ publicUrl: 'https://lh.example/leasehold' });
    await lease();
    const { id, url } = await consoleFor(lessee.token);
    expect(url).toMatch(new RegExp(`^wss://lh\\.example/leasehold/v1/consoles/${id}/stream\\?token=lhc_`));
  });

  it('answers an upgrade to any other path with 404, and a plain GET of the stream with 426', async () => {
    await setup();
    const ws = new WebSocket(`${t.url.replace('http', 'ws')}/v1/nodes`);
    const status = await new Promise<number>((resolve) => {
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('error', () => undefined);
    });
    expect(status).toBe(404);
    await lease();
    const { id } = await consoleFor(lessee.token);
    const plain = await t.request('GET', `/v1/consoles/${id}/stream`, { token: lessee.token });
    expect(plain.status).toBe(426);
  });

  it('closes open consoles with 1001 when the server shuts down', async () => {
    await setup();
    await lease();
    await enableConsole();
    const client = connect((await consoleFor(lessee.token)).url);
    await client.waitFor((out) => out.includes('login: '));
    await t.proxy.close();
    expect((await client.closed).code).toBe(1001);
  });

  it('gives up on a console that does not come up in time, with 4503', async () => {
    await setup({ session: { enableTimeoutMs: 5_000 } });
    await lease();
    // Ironic cannot be reached for longer than the proxy waits.
    t.driver.setFaults({ unavailable: true });
    const client = connect((await consoleFor(lessee.token)).url);
    await t.advanceUntil(() => client.isClosed(), 10 * MINUTE);
    const closed = await client.closed;
    expect(closed.code).toBe(4503);
    expect(closed.reason).toMatch(/did not come up within 5 s/);
  });
});
