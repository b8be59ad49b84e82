import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthLimiter, clientKey } from '../../src/access/auth-limiter.js';
import { ManualClock } from '../../src/domain/manual-clock.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/test-app.js';

/** What @hono/node-server hands the app for a connection from `address`. */
const from = (address: string) => ({ incoming: { socket: { remoteAddress: address } } });

describe('unknown tokens from one client', () => {
  let t: TestApp;
  let app: Hono;
  beforeAll(async () => {
    t = await startTestApp([]);
    app = t.app as unknown as Hono;
  });
  afterAll(() => t.close());

  async function get(path: string, token: string | null, address: string | null) {
    const headers: Record<string, string> = token === null ? {} : { authorization: `Bearer ${token}` };
    const res = await app.request(path, { headers }, address === null ? undefined : from(address));
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, retryAfter: res.headers.get('retry-after') };
  }
  const me = (token: string | null, address: string | null) => get('/v1/me', token, address);

  it('a client that sent ten unknown tokens gets 429 with Retry-After, is not heard meanwhile, and is heard again as time passes', async () => {
    const a = '203.0.113.7';
    for (let i = 0; i < 10; i++) expect((await me(`lh_guess-${i}`, a)).status).toBe(401);
    const refused = await me('lh_guess-10', a);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: { code: 'too_many_requests', message: expect.stringContaining('try again in 6 s'), details: { retry_after_seconds: 6 } },
    });
    expect(refused.retryAfter).toBe('6');
    // Not looked up while refused: a guess that happens to be right is not told apart.
    expect((await me(ADMIN_TOKEN, a)).status).toBe(429);

    await t.clock.advance(6_000);
    expect((await me('lh_guess-11', a)).status).toBe(401);
    expect((await me('lh_guess-12', a)).status).toBe(429);
    await t.clock.advance(60_000);
    expect((await me(ADMIN_TOKEN, a)).status).toBe(200);
  });

  it('a client whose tokens are good is never slowed, nor one that sends none, whatever others send', async () => {
    const bad = '203.0.113.8';
    const good = '198.51.100.20';
    for (let i = 0; i < 60; i++) {
      expect((await me(ADMIN_TOKEN, good)).status).toBe(200);
      expect([401, 429]).toContain((await me(`lh_wrong-${i}`, bad)).status);
    }
    expect((await me('lh_wrong', bad)).status).toBe(429);
    // No token at all is not a guess.
    for (let i = 0; i < 30; i++) expect((await me(null, '198.51.100.21')).status).toBe(401);
    expect((await me(ADMIN_TOKEN, '198.51.100.21')).status).toBe(200);
    // A few mistakes among good requests stay below the limit.
    for (let i = 0; i < 9; i++) {
      expect((await me(`lh_typo-${i}`, '198.51.100.22')).status).toBe(401);
      expect((await me(ADMIN_TOKEN, '198.51.100.22')).status).toBe(200);
    }
  });

  it('counts the addresses of one IPv6 /64 as one client, and an IPv4 address mapped into IPv6 as itself', async () => {
    for (let i = 0; i < 5; i++) expect((await me(`lh_v6-${i}`, '2001:db8:1:2::1')).status).toBe(401);
    for (let i = 0; i < 5; i++) expect((await me(`lh_v6b-${i}`, '2001:db8:1:2:ffff::9')).status).toBe(401);
    expect((await me('lh_v6c', '2001:db8:1:2::77')).status).toBe(429);
    expect((await me('lh_v6d', '2001:db8:1:3::1')).status).toBe(401);
    for (let i = 0; i < 10; i++) expect((await me(`lh_v4-${i}`, '::ffff:198.51.100.7')).status).toBe(401);
    expect((await me('lh_v4', '198.51.100.7')).status).toBe(429);
  });

  it('the Ironic-compatible gateway counts and refuses alike, in its own error shape with Retry-After', async () => {
    const c = '203.0.113.9';
    for (let i = 0; i < 10; i++) expect((await get('/baremetal/v1/nodes', `lh_gw-${i}`, c)).status).toBe(401);
    const refused = await get('/baremetal/v1/nodes', 'lh_gw', c);
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBe('6');
    expect(JSON.parse(refused.body.error_message).faultstring).toContain('too many unknown tokens');
    // One limiter for the whole API: refused at the gateway, refused at the REST API.
    expect((await me(ADMIN_TOKEN, c)).status).toBe(429);
  });
});

describe('the bad-token limiter', () => {
  it('remembers a bounded number of clients, however many addresses send unknown tokens', () => {
    const limiter = new AuthLimiter(new ManualClock('2030-01-01T00:00:00Z'), { burst: 2, refillMs: 1_000, maxClients: 100 });
    for (let i = 0; i < 5_000; i++) limiter.failed(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    expect(limiter.size).toBe(100);
  });

  it('forgets a client once its allowance has refilled', async () => {
    const clock = new ManualClock('2030-01-01T00:00:00Z');
    const limiter = new AuthLimiter(clock, { burst: 2, refillMs: 1_000, maxClients: 100 });
    limiter.failed('10.0.0.1');
    limiter.failed('10.0.0.1');
    expect(limiter.refusal('10.0.0.1')?.retryAfterSeconds).toBe(1);
    await clock.advance(2_000);
    expect(limiter.refusal('10.0.0.1')).toBeNull();
    expect(limiter.size).toBe(0);
  });

  it('keys clients by IPv4 address and IPv6 /64', () => {
    expect(clientKey('192.0.2.1')).toBe('192.0.2.1');
    expect(clientKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('2001:0db8:0000:0000:1:2:3:4')).toBe('2001:db8:0:0::/64');
    expect(clientKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
  });
});
