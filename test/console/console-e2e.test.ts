import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until, type Api } from '../support/http.js';
import { BIN } from '../support/processes.js';
import { startLeaseholdServer, type LeaseholdServer } from '../support/server.js';
import { connect } from './console-harness.js';
import { PROMPTLY_MS } from '../support/timing.js';

const NODES = [
  { uuid: 'c0000000-0000-4000-8000-000000000001', name: 'gpu-1', owner: 'physics-lab', power_state: 'power on', properties: { memory_mb: 65536, cpus: 32, local_gb: 480, cpu_arch: 'x86_64', gpus: 1 } },
];
const TIMINGS = { powerMs: 50, cleanMs: 200, deployMs: 100, undeployMs: 50, manageMs: 50, consoleMs: 20, bootOutputMs: 0 };

/** The serial console through the real `leasehold serve` process (simulated hardware, the real clock and engine). */
describe('the serial console end to end', () => {
  let lh: LeaseholdServer;
  const as: Record<string, Api> = {};
  const call = (who: string, method: string, path: string, body?: unknown) => as[who]!.call(method, path, body);

  beforeAll(async () => {
    lh = await startLeaseholdServer({ LEASEHOLD_SIMULATED_NODES: JSON.stringify(NODES), LEASEHOLD_SIMULATED_TIMINGS: JSON.stringify(TIMINGS) });
    as.admin = lh.admin;
    for (const [project, user] of [['physics-lab', 'pat'], ['bio-lab', 'bo'], ['geo', 'gil']] as const) as[user] = await lh.member(project, user);
    expect((await call('pat', 'POST', '/v1/offers', { node_id: 'gpu-1' })).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await lh?.stop();
  });

  it('a lessee and the CLI see the console during the lease; both are cut at its end', async () => {
    const lease = await call('bo', 'POST', '/v1/leases', { nodes: ['gpu-1'], duration: '6s' });
    expect(lease.status, JSON.stringify(lease.body)).toBe(201);
    const end = Date.parse(lease.body.end);
    expect((await call('gil', 'POST', '/v1/nodes/gpu-1/console')).status).toBe(404);

    // A WebSocket client (what the web UI will be) on the console's URL.
    const opened = await call('bo', 'POST', '/v1/nodes/gpu-1/console');
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    expect(opened.body.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/v1\/consoles\/[0-9a-f-]+\/stream\?token=lhc_/);
    const client = connect(opened.body.url);
    await client.waitFor((out) => out.includes('login: '));
    client.send('root\r');
    await client.waitFor((out) => out.includes('root\r\nPassword: '));

    // The real CLI with a pipe for its keyboard.
    const cli = spawn(process.execPath, [BIN, 'console', 'gpu-1'], {
      env: { PATH: process.env.PATH ?? '', HOME: lh.dataDir, ...as.bo!.cliEnv },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    cli.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    cli.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    const exited = new Promise<{ code: number | null; at: number }>((resolve) => cli.once('exit', (code) => resolve({ code, at: Date.now() })));
    await until(() => out.includes('[Leasehold simulated serial console: gpu-1'), 5_000, () => `CLI output ${JSON.stringify(out)} ${err}`);
    // One machine behind both: the CLI's Enter answers the password prompt the other client got to.
    cli.stdin.write('\r');
    await until(() => out.includes('Login incorrect'), 5_000, () => JSON.stringify(out));
    await client.waitFor((o) => o.includes('Login incorrect'));
    expect(Date.now()).toBeLessThan(end);

    const [closed, cliExit] = await Promise.all([client.closed, exited]);
    const wsLateMs = closed.at - end;
    const cliLateMs = cliExit.at - end;
    process.stdout.write(`[figures] console cut after the lease end: WebSocket client ${wsLateMs} ms, CLI process exited ${cliLateMs} ms\n`);
    expect(closed.code).toBe(4410);
    expect(closed.reason).toBe(`the lease ended at ${lease.body.end}`);
    expect(wsLateMs).toBeGreaterThanOrEqual(0);
    expect(wsLateMs).toBeLessThan(PROMPTLY_MS);
    expect(cliExit.code).toBe(1);
    expect(err).toContain(`the console was closed by the server: the lease ended at ${lease.body.end} (code 4410)`);
    expect(cliLateMs).toBeLessThan(PROMPTLY_MS);
    expect((await call('bo', 'POST', '/v1/nodes/gpu-1/console')).status).toBe(404);
  }, 60_000);
});
