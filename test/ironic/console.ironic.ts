import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startServer, type RunningServer } from '../../src/server/start-server.js';
import { ironicAvailable, startIronic, type IronicHandle } from '../support/ironic.js';
import { connect } from '../console/console-harness.js';

const avail = ironicAvailable();
const ADMIN = 'lh_console-ironic-admin-token-0123456789abcdef';

/**
 * The console proxy in front of a real standalone Ironic (fake-hardware, the `ipmitool-socat` console interface):
 * Leasehold turns the console on through Ironic's API, waits for Ironic's socat to listen (10–16 s) and connects to
 * it. There is no BMC behind the fake node, so the ipmitool that socat starts for each connection exits at once
 * and the console closes from the node's side (4502) — after the proxy reached it (unreachable would be 4503).
 */
describe.skipIf(!avail.ok)('the serial console on a real Ironic', () => {
  let ironic: IronicHandle;
  let server: RunningServer;
  let dataDir: string;
  let nodeId: string;
  const tokens: Record<string, string> = { admin: ADMIN };

  const call = async (who: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${tokens[who]}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };

  beforeAll(async () => {
    ironic = await startIronic();
    const enrolled = await ironic.enroll([
      {
        name: 'console-1',
        owner: 'physics-lab',
        properties: { memory_mb: 4096, cpus: 2, local_gb: 40, cpu_arch: 'x86_64' },
        interfaces: { console_interface: 'ipmitool-socat' },
        driver_info: { ipmi_address: '127.0.0.1', ipmi_username: 'admin', ipmi_password: 'console-bmc-secret' },
      },
    ]);
    nodeId = enrolled[0]!;
    dataDir = await mkdtemp(join(tmpdir(), 'leasehold-console-ironic-'));
    const config = loadConfig({
      LEASEHOLD_DRIVER: 'ironic',
      IRONIC_URL: ironic.url,
      LEASEHOLD_DATA_DIR: dataDir,
      LEASEHOLD_ADMIN_TOKEN: ADMIN,
      LEASEHOLD_CLEANING_GAP: '0s',
      LEASEHOLD_RECONCILE_INTERVAL: '2s',
    }, { port: 0 });
    server = await startServer(config, { logger: createLogger('silent'), print: () => undefined });
    for (const [project, user] of [['physics-lab', 'pat'], ['bio-lab', 'bo']] as const) {
      const p = await call('admin', 'POST', '/v1/projects', { name: project });
      const u = await call('admin', 'POST', '/v1/users', { name: user, project_id: p.body.id, role: 'member' });
      tokens[user] = (await call('admin', 'POST', '/v1/tokens', { user_id: u.body.id })).body.token;
    }
    expect((await call('pat', 'POST', '/v1/offers', { node_id: 'console-1' })).status).toBe(201);
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    await ironic?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("a lessee's console turns Ironic's socat console on and the proxy connects to it; the end of the lease takes it away", async () => {
    const lease = await call('bo', 'POST', '/v1/leases', { nodes: ['console-1'], duration: '10m' });
    expect(lease.status, JSON.stringify(lease.body)).toBe(201);
    expect((await ironic.request('GET', `/v1/nodes/${nodeId}/states/console`)).body.console_enabled).toBe(false);

    const opened = await call('bo', 'POST', '/v1/nodes/console-1/console');
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    const started = Date.now();
    const client = connect(opened.body.url);
    const closed = await Promise.race([client.closed, new Promise<null>((r) => setTimeout(() => r(null), 90_000))]);
    const waitedMs = Date.now() - started;
    process.stdout.write(`[figures] Ironic socat console: enabled and connected through the proxy in ${waitedMs} ms\n`);

    expect(client.notices().join('')).toContain('the serial console of console-1 is off: turning it on');
    const console = (await ironic.request('GET', `/v1/nodes/${nodeId}/states/console`)).body;
    expect(console).toMatchObject({ console_enabled: true, console_info: { type: 'socat', url: expect.stringMatching(/^tcp:\/\/127\.0\.0\.1:\d+$/) } });
    expect(closed, 'the console neither connected nor failed within 90 s').not.toBeNull();
    expect(closed!.code, closed!.reason).toBe(4502);
    expect(closed!.reason).toBe('the serial console of console-1 closed the connection');

    // The same token opens it again while it lasts; the console is on now, so without the wait.
    const again = connect(opened.body.url);
    expect((await again.closed).code).toBe(4502);
    expect(again.notices()).toEqual([]);
    const events = await call('bo', 'GET', `/v1/events?node_id=${nodeId}&type=console.disconnected`);
    expect(events.body.events.map((e: { details: { code: number } }) => e.details.code)).toEqual([4502, 4502]);

    // The lease ends: the engine turns Ironic's console off, and the lessee cannot ask for one any more.
    expect((await call('bo', 'DELETE', `/v1/leases/${lease.body.id}`)).status).toBe(200);
    expect((await call('bo', 'POST', '/v1/nodes/console-1/console')).status).toBe(404);
    await ironic.waitForNode(nodeId, (n) => n.console_enabled === false, { timeoutMs: 60_000, what: 'console disabled' });
  }, 240_000);
});
