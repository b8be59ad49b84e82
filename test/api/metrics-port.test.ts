import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { parsePrometheusText, sampleValue } from '../support/prometheus-text.js';

const ADMIN = 'lh_metrics-port-admin-token-0123456789abcdef';
const SCRAPE = 'metrics-scrape-token-0123456789';

let dataDir: string;
let server: RunningServer;

/** `leasehold serve` in this process, as configured from its environment: both ports picked free. */
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'leasehold-metrics-'));
  const config = loadConfig({
    LEASEHOLD_DATA_DIR: dataDir,
    LEASEHOLD_PORT: '0',
    LEASEHOLD_METRICS_PORT: '0',
    LEASEHOLD_METRICS_TOKEN: SCRAPE,
    LEASEHOLD_ADMIN_TOKEN: ADMIN,
    LEASEHOLD_SIMULATED_NODES: JSON.stringify([{ name: 'n1', properties: { memory_mb: 1024, cpus: 1, local_gb: 10, cpu_arch: 'x86_64' } }]),
  });
  server = await startServer(config, { logger: createLogger('silent'), print: () => undefined });
}, 60_000);
afterAll(async () => {
  await server?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('LEASEHOLD_METRICS_PORT', () => {
  it('serves /metrics on its own port, with the token, counting the API port’s requests and process metrics', async () => {
    expect(server.metricsUrl).not.toBeNull();
    expect(server.metricsUrl).not.toBe(server.url);
    expect((await fetch(`${server.url}/v1/nodes`, { headers: { authorization: `Bearer ${ADMIN}` } })).status).toBe(200);
    const res = await fetch(`${server.metricsUrl}/metrics`, { headers: { authorization: `Bearer ${SCRAPE}` } });
    expect(res.status).toBe(200);
    const m = parsePrometheusText(await res.text());
    expect(sampleValue(m, 'leasehold_http_requests_total', { method: 'GET', route: '/v1/nodes', status: '200' })).toBe(1);
    expect(sampleValue(m, 'leasehold_nodes', { provision_state: 'available', quarantined: 'false' })).toBe(1);
    expect(sampleValue(m, 'leasehold_store_up')).toBe(1);
    // prom-client's process metrics come with the server (not with the tests' in-process apps).
    expect(m.get('process_cpu_user_seconds_total')?.type).toBe('counter');
  });

  it('refuses a scrape without the token there too, and serves nothing else on that port', async () => {
    expect((await fetch(`${server.metricsUrl}/metrics`)).status).toBe(401);
    expect((await fetch(`${server.metricsUrl}/v1/nodes`, { headers: { authorization: `Bearer ${ADMIN}` } })).status).toBe(404);
    expect((await fetch(`${server.metricsUrl}/healthz`)).status).toBe(404);
  });

  it('takes /metrics off the API port, which says where it is', async () => {
    const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${SCRAPE}` } });
    expect(res.status).toBe(404);
    const port = new URL(server.metricsUrl!).port;
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(`metrics are served on port ${port} (LEASEHOLD_METRICS_PORT)`);
  });
});
