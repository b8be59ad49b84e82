import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseTimekeeper } from '../../src/engine/lease-timekeeper.js';
import { WebhookDispatcher, signWebhook } from '../../src/engine/webhook-dispatcher.js';
import { HOUR, MINUTE, NODE_IDS, T0, at, harness, runUntil, silentLogger, type Harness } from './helpers.js';

const SECRET = 'whsec-test';

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

describe('lease webhooks', () => {
  let h: Harness;
  let server: Server;
  let url: string;
  let received: Received[];
  let failNext = 0;

  beforeEach(async () => {
    h = await harness();
    received = [];
    failNext = 0;
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        if (failNext > 0) {
          failNext--;
          res.writeHead(503).end();
          return;
        }
        received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterEach(async () => {
    await h.close();
    await new Promise((r) => server.close(r));
  });

  const dispatcher = (over: { url?: string | null } = {}) =>
    new WebhookDispatcher({ store: h.store, clock: h.clock, logger: silentLogger }, { url: over.url === undefined ? url : over.url, secret: SECRET });
  // Notices before the end are written by the timekeeper with their events; the dispatcher sends their webhooks.
  const keeper = () => new LeaseTimekeeper({ store: h.store, clock: h.clock, logger: silentLogger, renewer: () => null, noticeOffsetsMs: [HOUR] });
  const types = () => received.map((r) => JSON.parse(r.body).type);

  it('announces a lease started, ending soon and ended, each once, signed', async () => {
    const lease = await h.createLease({ start: T0, end: at(3 * HOUR), nodes: [NODE_IDS[0]!] });
    const engine = h.engine();
    const hooks = dispatcher();
    await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'active');
    await hooks.runOnce();
    expect(types()).toEqual(['lease.started']);

    await h.clock.advanceTo(at(2 * HOUR + MINUTE));
    await keeper().runOnce();
    await keeper().runOnce();
    await hooks.runOnce();
    await hooks.runOnce();
    expect(types()).toEqual(['lease.started', 'lease.ending_soon']);

    await h.clock.advanceTo(at(3 * HOUR));
    await runUntil(h, engine, async () => (await h.lease(lease.id)).state === 'ended');
    await hooks.runOnce();
    expect(types()).toEqual(['lease.started', 'lease.ending_soon', 'lease.ended']);

    const ended = received[2]!;
    const payload = JSON.parse(ended.body);
    expect(payload.lease).toMatchObject({ id: lease.id, project_id: h.lesseeId, state: 'ended' });
    expect(ended.headers['x-leasehold-event']).toBe('lease.ended');
    const signature = String(ended.headers['x-leasehold-signature']);
    const t = Number(/t=(\d+)/.exec(signature)![1]);
    expect(signature).toBe(signWebhook(SECRET, ended.body, t));
    expect(signWebhook('wrong-secret', ended.body, t)).not.toBe(signature);
  });

  it('retries a failing receiver with backoff until it answers', async () => {
    const lease = await h.createLease({ start: T0, end: at(HOUR * 5), nodes: [NODE_IDS[0]!] });
    await runUntil(h, h.engine(), async () => (await h.lease(lease.id)).state === 'active');
    failNext = 2;
    const hooks = dispatcher();
    await hooks.runOnce();
    expect(received).toHaveLength(0);
    await hooks.runOnce();
    expect(received).toHaveLength(0); // not due yet: the first retry waits 2 s
    await h.clock.advance(2_000);
    await hooks.runOnce();
    await h.clock.advance(4_000);
    await hooks.runOnce();
    expect(types()).toEqual(['lease.started']);
  });

  it('without a configured URL, deliveries are skipped rather than piling up', async () => {
    const lease = await h.createLease({ start: T0, end: at(HOUR * 5), nodes: [NODE_IDS[0]!] });
    await runUntil(h, h.engine(), async () => (await h.lease(lease.id)).state === 'active');
    expect(await dispatcher({ url: null }).runOnce()).toBe(1);
    expect(await dispatcher().runOnce()).toBe(0);
    expect(received).toHaveLength(0);
  });
});
