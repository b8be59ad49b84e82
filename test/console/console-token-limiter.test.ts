import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN } from '../support/test-app.js';
import { connect, startConsoleServer, type ConsoleServer } from './console-harness.js';

/** The serial console's WebSocket and the REST API share one limiter on unknown tokens (src/api/auth-limiter.ts). */
describe('unknown console tokens', () => {
  let t: ConsoleServer;
  beforeAll(async () => {
    t = await startConsoleServer();
  });
  afterAll(() => t.close());

  it('a client that sent ten unknown console tokens is closed with 4429 and told when to retry, on the console and the API alike', async () => {
    const created = await t.request('POST', '/v1/nodes/gpu-01/console');
    expect(created.status).toBe(201);
    const url: string = created.body.url;
    const guess = (i: number) => url.replace(/token=.*/, `token=lhc_${String(i).padStart(43, 'x')}`);
    for (let i = 0; i < 10; i++) expect((await connect(guess(i)).closed).code).toBe(4401);

    const refused = await connect(guess(10)).closed;
    expect(refused.code).toBe(4429);
    expect(refused.reason).toBe('too many unknown tokens from this address: try again in 6 s');
    // Not looked up while refused, even the right one; the REST API refuses this client too.
    expect((await connect(url).closed).code).toBe(4429);
    const api = await t.request('GET', '/v1/me', { token: ADMIN_TOKEN });
    expect(api.status).toBe(429);
    expect(api.headers.get('retry-after')).toBe('6');

    await t.clock.advance(60_000);
    expect((await t.request('GET', '/v1/me', { token: ADMIN_TOKEN })).status).toBe(200);
    expect((await connect(guess(11)).closed).code).toBe(4401);
  });
});
