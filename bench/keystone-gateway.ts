import type { KeystoneProject, KeystoneUser } from '../test/support/keystone-api.js';
import { tokenSource } from '../test/support/keystone-api.js';
import { call, enrol, LESSEES, lesseeInIronic, NODES, offerAndLease, OWNERS, startIronic, startLeasehold, type Call, type GatewayStack } from './gateway-setup.js';
import { keystoneVersion, startKeystone } from './keystone-setup.js';
import { until, type Cleanups } from './stack-processes.js';

/**
 * Section 4's `keystone` variant, set up as a small OpenStack cloud with Leasehold dropped into it (as the suites'
 * test/support/keystone-leasehold.ts does, but with the bench's own processes and sizes):
 * - a real Keystone (keystone-setup.ts);
 * - a real Ironic with auth_strategy = keystone, validating tokens as its service user `ironic` (admin and service on
 *   project `service`), registered in the catalog as service type `baremetal` (internal and public endpoint: Ironic);
 *   its nodes' `owner` is the owners' Keystone project id;
 * - the real `leasehold serve` with LEASEHOLD_IDENTITY=keystone and IRONIC_AUTH_TYPE=keystone and no IRONIC_URL (it
 *   finds Ironic at the catalog's internal `baremetal` endpoint), signed in as its service user `leasehold`;
 * - no Leasehold admin: the owners' and the lessees' members are Keystone users (role `member`) in Keystone
 *   projects, calling Leasehold with project-scoped Keystone tokens: the owner offers the node, the lessee leases it.
 * The direct calls carry a user's Keystone token too: the lessee's for the GET, and for the power PUT the first of
 * lessee, owner, Ironic's service user that Ironic's default policy lets set the power state (probed, and reported).
 */
export async function startKeystoneGatewayStack(cleanups: Cleanups, progress: (message: string) => void): Promise<GatewayStack> {
  const say = (message: string) => progress(`4 [keystone]: ${message}`);
  const ks = await startKeystone(cleanups);
  const owners = await ks.createProject(OWNERS);
  const lessees = await ks.createProject(LESSEES);
  const ownerUser = await ks.createUser(`${OWNERS}-member`, { project: owners.id, roles: ['member'] });
  const lesseeUser = await ks.createUser(`${LESSEES}-member`, { project: lessees.id, roles: ['member'] });
  const ironicService = await ks.ensureServiceUser('ironic');
  const leaseholdService = await ks.ensureServiceUser('leasehold');
  say(`Keystone at ${ks.url}; starting Ironic (auth_strategy = keystone)`);

  const ironicUrl = await startIronic(
    ['--auth', 'keystone', '--keystone-url', ks.url, '--keystone-user', ironicService.user.name, '--keystone-password', ironicService.user.password, '--keystone-project', 'service'],
    cleanups,
  );
  await ks.setEndpoints('baremetal', 'ironic', { internal: ironicUrl, public: ironicUrl });
  const serviceToken = tokenSource(() => ks.issueToken({ user: ironicService.user, project: ironicService.project.id }));
  const ironic: Call = async (method, path, body) => call(`${ironicUrl}${path}`, method, { 'X-Auth-Token': await serviceToken() }, body);
  const directWith = (token: string): Call => (method, path, body) => call(`${ironicUrl}${path}`, method, { 'X-Auth-Token': token }, body);
  const uuids = await Promise.all(Array.from({ length: NODES }, (_, i) => enrol(ironic, `gw-bench-${i}`, owners.id)));
  say(`Ironic at ${ironicUrl} (the catalog's baremetal endpoint), ${NODES} nodes enrolled; starting leasehold serve`);

  const server = await startLeasehold(
    {
      LEASEHOLD_IDENTITY: 'keystone',
      KEYSTONE_URL: ks.url,
      KEYSTONE_USERNAME: leaseholdService.user.name,
      KEYSTONE_PASSWORD: leaseholdService.user.password,
      KEYSTONE_PROJECT_NAME: 'service',
      IRONIC_AUTH_TYPE: 'keystone',
    },
    cleanups,
  );
  const token = async (user: KeystoneUser, project: KeystoneProject) => (await ks.issueToken({ user, project: project.id })).token;
  const ownerToken = await token(ownerUser, owners);
  const lesseeToken = await token(lesseeUser, lessees);
  const projectId = await offerAndLease(server.url, ownerToken, lesseeToken);
  if (projectId !== lessees.id) throw new Error(`the lease's project is ${projectId}, not the lessees' Keystone project ${lessees.id}`);
  const uuid = uuids[0]!;
  await lesseeInIronic(ironic, uuid, projectId);

  // Who may make each direct call under Ironic's default policy: the first caller, in this order, that gets the
  // answer the measurement expects (the node is off: powering it off again changes nothing).
  const callers: Array<[string, string]> = [
    ["the lessee's member", lesseeToken],
    ["the owner's member", ownerToken],
    ["Ironic's service user (admin on project service)", await serviceToken()],
  ];
  const idle = () =>
    until(
      async () => {
        const node = JSON.parse((await ironic('GET', `/v1/nodes/${uuid}?fields=reservation,target_power_state`)).text);
        return node.reservation === null && node.target_power_state === null;
      },
      30_000,
      `node ${uuid} idle`,
    );
  const get = await firstAllowed(callers, (t) => directWith(t)('GET', `/v1/nodes/${uuid}`), 200);
  const power = await firstAllowed(callers, (t) => directWith(t)('PUT', `/v1/nodes/${uuid}/states/power`, { target: 'power off' }), 202);
  await idle();
  say(`direct GET as ${get.label}, direct power PUT as ${power.label}`);

  return {
    ironicUrl,
    ironic,
    direct: { get: directWith(get.token), power: directWith(power.token) },
    directAs: { get: get.label, power: power.label },
    uuid,
    serverUrl: server.url,
    serverPid: server.proc.pid,
    lesseeToken,
    cold: { newToken: () => token(lesseeUser, lessees), directWith },
    extra: keystoneVersion(),
  };
}

/** The first of `callers` whose token gets `status` from `probe`; the label names the refusals before it. */
async function firstAllowed(
  callers: ReadonlyArray<[string, string]>,
  probe: (token: string) => Promise<{ status: number }>,
  status: number,
): Promise<{ label: string; token: string }> {
  const refused: string[] = [];
  for (const [who, token] of callers) {
    const answer = (await probe(token)).status;
    if (answer === status) return { label: refused.length > 0 ? `${who} (Ironic refused ${refused.join(', ')})` : who, token };
    refused.push(`${who}: ${answer}`);
  }
  throw new Error(`Ironic refused every caller: ${refused.join(', ')}`);
}
