import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchange } from '../../src/drivers/http-exchange.js';

describe('exchange (the Ironic client\'s HTTP calls)', () => {
  let server: Server;
  let base: string;
  const seen: Array<{ method: string; body: string; sockets: number }> = [];
  let sockets = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method!, body, sockets });
        if (req.url === '/moved') res.writeHead(302, { Location: 'http://elsewhere.example/' }).end();
        else if (req.url === '/slow') setTimeout(() => res.end('late'), 2_000);
        else res.writeHead(201, [['OpenStack-Request-Id', 'req-1'], ['X-Twice', 'a'], ['X-Twice', 'b']]).end(`{"got":"${body}"}`);
      });
    });
    server.on('connection', () => sockets++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('answers with the status, the whole body and the headers, over one kept connection', async () => {
    const first = await exchange(`${base}/x`, { method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: 'é', signal: new AbortController().signal });
    const second = await exchange(`${base}/x`, { method: 'GET', headers: {}, signal: new AbortController().signal });
    expect([first.status, first.text, first.headers.get('openstack-request-id'), first.headers.get('x-twice')]).toEqual([201, '{"got":"é"}', 'req-1', 'a, b']);
    expect(second.text).toBe('{"got":""}');
    expect(seen.slice(-2).map((s) => [s.method, s.sockets])).toEqual([['PATCH', seen.at(-2)!.sockets], ['GET', seen.at(-2)!.sockets]]);
  });

  it('refuses a redirect instead of following it with the credentials', async () => {
    await expect(exchange(`${base}/moved`, { method: 'GET', headers: { 'X-Auth-Token': 't' }, signal: new AbortController().signal })).rejects.toThrow(/redirect refused \(302/);
  });

  it('gives up when its signal aborts, with the signal\'s reason', async () => {
    const timeout = AbortSignal.timeout(100);
    await expect(exchange(`${base}/slow`, { method: 'GET', headers: {}, signal: timeout })).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('rejects with the socket\'s error code when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(exchange(`http://127.0.0.1:${port}/`, { method: 'GET', headers: {}, signal: new AbortController().signal })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
