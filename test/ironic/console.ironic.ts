import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../console/console-harness.js';
import type { Api } from '../support/http.js';
import { ironicAvailable, startIronic, type IronicHandle } from '../support/ironic.js';
import { startLeasehold, type LeaseholdOnIronic } from '../support/ironic-leasehold.js';

const avail = ironicAvailable();

/**
 * The console proxy in front of a real standalone Ironic (fake-hardware, the `ipmitool-socat` console interface):
 * Leasehold turns the console on through Ironic's API, waits for Ironic's socat to listen (10–16 s) and connects to
 * it. There is no BMC behind the fake node, so the ipmitool that socat starts for each connection exits at once
 * and the console closes from the node's side (4502) — after the proxy reached it (unreachable would be 4503).
 */
describe.skipIf(!avail.ok)('the serial console on a real Ironic', () => {
  let ironic: IronicHandle;
  let lh: LeaseholdOnIronic;
  let nodeId: string;
  const as: Record<string, Api> = {};
  const call = (who: string, method: string, path: string, body?: unknown) => as[who]!.call(method, path, body);

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
    lh = await startLeasehold(ironic);
    for (const [project, user] of [['physics-lab', 'pat'], ['bio-lab', 'bo']] as const) as[user] = await lh.member(project, user);
    expect((await call('pat', 'POST', '/v1/offers', { node_id: 'console-1' })).status).toBe(201);
  }, 300_000);
  afterAll(async () => {
    await lh?.stop();
    await ironic?.stop();
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
