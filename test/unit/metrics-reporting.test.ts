import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { systemClock } from '../../src/domain/clock.js';
import { methodLabel, pathTemplate } from '../../src/domain/metrics.js';
import { IronicDriver } from '../../src/drivers/ironic/ironic-driver.js';
import { KeystoneClient } from '../../src/keystone/keystone-client.js';
import { createLogger } from '../../src/logger.js';
import { PrometheusMetrics } from '../../src/server/prometheus-metrics.js';
import { FakeIronic, LOCKED, rawNode, uuid } from '../drivers/fake-ironic.js';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.js';

const scrape = async (metrics: PrometheusMetrics) => parsePrometheusText(await metrics.render());

describe('labels from paths and methods', () => {
  const words = new Set(['v1', 'nodes', 'states', 'power', 'vifs']);

  it('turns every segment outside the vocabulary into {id} and drops the query', () => {
    expect(pathTemplate('/v1/nodes/gpu-01/states/power', words)).toBe('/v1/nodes/{id}/states/power');
    expect(pathTemplate(`/v1/nodes/${uuid(1)}/vifs/port-9?x=1`, words)).toBe('/v1/nodes/{id}/vifs/{id}');
    expect(pathTemplate('/', words)).toBe('/');
  });

  it('cuts a path a client made up after six segments, so a label never grows with the input', () => {
    expect(pathTemplate('/v1/a/b/c/d/e/f/g/h', words)).toBe('/v1/{id}/{id}/{id}/{id}/{id}/…');
  });

  it('keeps the standard methods and calls anything else `other`', () => {
    expect(methodLabel('get')).toBe('GET');
    expect(methodLabel('PROPFIND')).toBe('other');
  });
});

describe('metrics configuration', () => {
  it('serves /metrics on the API port, open, unless told otherwise', () => {
    expect(loadConfig({ HOME: '/h' }).metrics).toEqual({ port: null, host: '127.0.0.1', token: null });
  });

  it('takes a separate port, its own host (default the API host) and a bearer token', () => {
    const config = loadConfig({ HOME: '/h', LEASEHOLD_HOST: '0.0.0.0', LEASEHOLD_METRICS_PORT: '9464', LEASEHOLD_METRICS_TOKEN: 'a'.repeat(20) });
    expect(config.metrics).toEqual({ port: 9464, host: '0.0.0.0', token: 'a'.repeat(20) });
    expect(loadConfig({ HOME: '/h', LEASEHOLD_METRICS_PORT: '9464', LEASEHOLD_METRICS_HOST: '10.0.0.5' }).metrics.host).toBe('10.0.0.5');
  });

  it('refuses a bad port and a short token, naming the variable', () => {
    expect(() => loadConfig({ HOME: '/h', LEASEHOLD_METRICS_PORT: '70000' })).toThrow(/LEASEHOLD_METRICS_PORT/);
    expect(() => loadConfig({ HOME: '/h', LEASEHOLD_METRICS_TOKEN: 'short' })).toThrow(/LEASEHOLD_METRICS_TOKEN must be at least 16/);
  });
});

describe('backend requests', () => {
  let fake: FakeIronic | null = null;
  let server: Server | null = null;
  afterEach(async () => {
    await fake?.stop();
    fake = null;
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = null;
  });

  it('Ironic: each attempt timed by method and path template, a locked node counted as a 409 error, no node id in labels', async () => {
    fake = await new FakeIronic().start();
    fake.add(rawNode(1));
    const metrics = new PrometheusMetrics();
    const driver = new IronicDriver({ url: fake.url, auth: { type: 'none' }, clock: systemClock, logger: createLogger('silent'), retry: { attempts: 3, baseMs: 1, maxMs: 2 }, metrics });
    try {
      fake.script((r) => r.method === 'PUT', 409, { fault: LOCKED(uuid(1)), times: 1 });
      await driver.setPowerState(uuid(1), 'power on');
      await driver.getNode(uuid(1));
      const m = await scrape(metrics);
      const put = { method: 'PUT', path: '/v1/nodes/{id}/states/power' };
      expect(sampleValue(m, 'leasehold_ironic_request_duration_seconds_count', put)).toBe(2);
      expect(sampleValue(m, 'leasehold_ironic_request_errors_total', { ...put, error: '409' })).toBe(1);
      expect(sampleValue(m, 'leasehold_ironic_request_duration_seconds_count', { method: 'GET', path: '/v1/nodes/{id}' })).toBe(1);
      // The microversion negotiation is a request too.
      expect(sampleValue(m, 'leasehold_ironic_request_duration_seconds_count', { method: 'GET', path: '/' })).toBe(1);
      expect(await metrics.render()).not.toContain(uuid(1));
    } finally {
      await driver.close();
    }
  });

  it('Keystone: a refused token is a 401 error, an unreachable Keystone a network error', async () => {
    server = createServer((_req, res) => res.writeHead(401).end('{}'));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const metrics = new PrometheusMetrics();
    const keystone = new KeystoneClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v3`, metrics });
    await expect(keystone.validateToken('service-secret', 'user-secret')).rejects.toThrow(/refused/);
    const closed = new KeystoneClient({ url: 'http://127.0.0.1:1/v3', metrics });
    await expect(closed.ping()).rejects.toThrow(/unreachable/);
    const m = await scrape(metrics);
    expect(sampleValue(m, 'leasehold_keystone_request_errors_total', { method: 'GET', path: '/v3/auth/tokens', error: '401' })).toBe(1);
    expect(sampleValue(m, 'leasehold_keystone_request_errors_total', { method: 'GET', path: '/v3', error: 'network' })).toBe(1);
    expect(sampleValue(m, 'leasehold_keystone_request_duration_seconds_count', { method: 'GET', path: '/v3/auth/tokens' })).toBe(1);
    expect(await metrics.render()).not.toMatch(/secret/);
  });
});

describe('a scrape while the database is away', () => {
  it('still answers, with leasehold_store_up 0 and no stale counts', async () => {
    const metrics = new PrometheusMetrics();
    const failing = () => Promise.reject(new Error('connection refused'));
    metrics.watch({ store: { stats: { leasesByState: failing, allocationsByState: failing, nodesByState: failing, pool: () => ({ max: 10, in_use: 0, idle: 0, waiting: 3 }) } } });
    const m = await scrape(metrics);
    expect(sampleValue(m, 'leasehold_store_up')).toBe(0);
    expect(m.get('leasehold_leases')?.samples).toEqual([]);
    expect(sampleValue(m, 'leasehold_db_pool_waiting')).toBe(3);
  });
});
