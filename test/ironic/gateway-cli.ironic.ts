/**
 * The Ironic-compatible endpoint (`/baremetal`) with a real Ironic behind it, driven by the unmodified `baremetal`
 * CLI from Debian's python3-ironicclient, with lessee, owner, third-party and operator tokens.
 */
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ironicAvailable, startIronic, type IronicHandle } from '../support/ironic.js';
import { until, type Api } from '../support/http.js';
import { ADMIN_TOKEN, nodeSpec, startLeasehold, type LeaseholdOnIronic } from '../support/ironic-leasehold.js';

const avail = ironicAvailable();

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe.skipIf(!avail.ok)('the baremetal CLI through the gateway', () => {
  let ironic: IronicHandle;
  let lh: LeaseholdOnIronic;
  let owner: Api;
  let lessee: Api;
  let stranger: Api;
  let nodeId = '';
  let leaseId = '';

  const baremetal = (token: string, args: string[]): Promise<Run> =>
    new Promise((resolve) => {
      execFile(
        '/usr/bin/baremetal',
        ['--os-auth-type', 'admin_token', '--os-endpoint', `${lh.url}/baremetal`, '--os-token', token, ...args],
        { timeout: 60_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' } },
        (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
      );
    });
  const json = async (token: string, args: string[]) => {
    const run = await baremetal(token, [...args, '-f', 'json']);
    if (run.code !== 0) throw new Error(`baremetal ${args.join(' ')} → ${run.code}: ${run.stderr}`);
    return JSON.parse(run.stdout);
  };

  beforeAll(async () => {
    ironic = await startIronic();
    const ids = await ironic.enroll([
      nodeSpec('gw-node', { memory_gib: 128, cpus: 32, local_gb: 960 }, { owner: 'gw-owners' }),
      nodeSpec('gw-other', { memory_gib: 128, cpus: 32, local_gb: 960 }, { owner: 'gw-others' }),
    ]);
    nodeId = ids[0]!;
    lh = await startLeasehold(ironic);
    owner = await lh.member('gw-owners', 'olive');
    lessee = await lh.member('gw-lessees', 'leo');
    stranger = await lh.member('gw-strangers', 'sam');
    await owner.ok('POST', '/v1/offers', { node_id: 'gw-node', max_lease_duration: '1d' });
    // Long enough for every test before the last under any load (each CLI call is a Python start, 1–4 s): the last
    // test ends it. It used to be 25 s and run out under load while the power test was still running.
    const lease = await lessee.ok('POST', '/v1/leases', { nodes: ['gw-node'], duration: '30m' });
    leaseId = lease.id;
    await until(async () => (await ironic.getNode(nodeId)).lessee === lease.project_id, 10_000, 'lessee set in Ironic');
  });
  afterAll(async () => {
    await lh?.stop();
    await ironic?.stop();
  });

  it('lists to each caller only the nodes it may see: the lessee its leased node, a third party nothing, the operator all', async () => {
    const names = async (token: string) => (await json(token, ['node', 'list'])).map((n: { Name: string }) => n.Name).sort();
    expect(await names(lessee.token)).toEqual(['gw-node']);
    expect(await names(owner.token)).toEqual(['gw-node']);
    expect(await names(stranger.token)).toEqual([]);
    expect(await names(ADMIN_TOKEN)).toEqual(['gw-node', 'gw-other']);
  });

  it("shows the lessee its node with Ironic's fields and the BMC secrets redacted", async () => {
    const node = await json(lessee.token, ['node', 'show', 'gw-node']);
    expect(node).toMatchObject({ uuid: nodeId, name: 'gw-node', owner: 'gw-owners', provision_state: 'available' });
    expect(node.driver_info).toEqual({ content: '** Redacted - requires baremetal:node:get:driver_info permission. **' });
    expect(JSON.stringify(node)).not.toContain('192.0.2.10');
    const asOwner = await json(owner.token, ['node', 'show', 'gw-node']);
    expect(asOwner.driver_info).toMatchObject({ ipmi_password: '******' }); // Ironic's own masking, for the owner
  });

  it('lets the lessee power the node on and off during the lease, and Ironic does it', async () => {
    expect((await baremetal(lessee.token, ['node', 'power', 'on', 'gw-node'])).code).toBe(0);
    await until(async () => (await ironic.getNode(nodeId)).power_state === 'power on', 10_000, 'power on in Ironic');
    expect((await baremetal(lessee.token, ['node', 'power', 'off', 'gw-node'])).code).toBe(0);
    await until(async () => (await ironic.getNode(nodeId)).power_state === 'power off', 10_000, 'power off in Ironic');
  });

  it("refuses a lessee's attempt to change the owner, and a third party finds no such node", async () => {
    const owned = await baremetal(lessee.token, ['node', 'set', 'gw-node', '--owner', 'gw-lessees']);
    expect(owned.code).not.toBe(0);
    expect(owned.stderr).toMatch(/HTTP 403/);
    expect((await ironic.getNode(nodeId)).owner).toBe('gw-owners');
    const seen = await baremetal(stranger.token, ['node', 'show', 'gw-node']);
    expect(seen.stderr).toMatch(/HTTP 404/);
    const powered = await baremetal(stranger.token, ['node', 'power', 'on', 'gw-node']);
    expect(powered.stderr).toMatch(/HTTP 404/);
  });

  it('answers the lessee "not found" once its lease is over', async () => {
    await lessee.ok('DELETE', `/v1/leases/${leaseId}`); // ended now: access ends at this instant
    const seen = await baremetal(lessee.token, ['node', 'show', 'gw-node']);
    expect(seen.code).not.toBe(0);
    expect(seen.stderr).toMatch(/HTTP 404/);
    expect((await baremetal(lessee.token, ['node', 'power', 'on', 'gw-node'])).stderr).toMatch(/HTTP 404/);
    expect(await json(lessee.token, ['node', 'list'])).toEqual([]);
  });
});
