import { startKeystoneCloud, type CloudUser, type KeystoneCloud } from '../test/support/keystone-leasehold.js';
import { neutronAvailable, startNeutronLab, type NeutronLab } from '../test/support/neutron.js';
import type { Sizes } from './options.js';
import { fmt, summarize, table, type LatencySummary } from './stats.js';

/**
 * Section 7: tenant networks against a real Neutron (issue 14), in the suites' lab (test/support/neutron.ts:
 * Keystone, Neutron with ML2 `baremetal` and ironic-neutron-agent, Ironic with the `neutron` network interface)
 * with the real `leasehold serve` in front (LEASEHOLD_IDENTITY=keystone, Ironic and Neutron from the catalog).
 *
 * - Attach: a lessee's `POST /v1/nodes/{id}/networks` (Leasehold checks the network, picks a NIC, creates the port in
 *   the lessee's project, has Ironic plug it in) against the same steps done directly — the port created in Neutron
 *   with the lessee's token, then Ironic's `POST /v1/nodes/{id}/vifs` with Ironic's service user (Ironic's default
 *   policy refuses a lessee's member the VIF attach). Interleaved, on a deployed node, so Neutron binds every port.
 *   Each round's attachment is taken off again, untimed, before the next.
 * - Hand-back: a lease with one network on its deployed node ended by its lessee (`DELETE /v1/leases/{id}`); from the
 *   end instant the lease answers, how long until Ironic lists no VIF on the node, and until cleaning has started
 *   (the node leaves `active`): the network must be off first. Each round leases the node again once it is clean.
 */

export interface NetworksResult {
  readonly rounds: number;
  readonly attach: { readonly direct: LatencySummary; readonly leasehold: LatencySummary };
  readonly ends: number;
  readonly vifsOff: LatencySummary;
  readonly cleaningStarted: LatencySummary;
  /** Hand-backs where cleaning started before the last VIF was off (must be 0). */
  readonly cleanedFirst: number;
  readonly labMs: number;
}

export type NetworksSection = { readonly skipped: string } | { readonly result: NetworksResult };

export async function benchNetworks(sizes: Sizes, progress: (message: string) => void): Promise<NetworksSection> {
  const avail = neutronAvailable();
  if (!avail.ok) return { skipped: `skipped: ${avail.reason}` };
  const say = (m: string) => progress(`5: ${m}`);
  const t0 = performance.now();
  let lab: NeutronLab | null = null;
  let cloud: KeystoneCloud | null = null;
  try {
    lab = await startNeutronLab();
    const l = lab;
    cloud = await startKeystoneCloud({
      nodes: [{ name: 'bench-net-1', properties: {}, owner: 'bench-owners' }],
      stack: { keystone: l.keystone, ironic: l.ironic, enroll: (nodes) => l.enrollNodes(nodes.map((n) => ({ name: n.name, owner: n.owner, ports: [{}, {}] }))) },
      env: { LEASEHOLD_NETWORKS: 'neutron', LEASEHOLD_LOG_LEVEL: 'warn' },
    });
    const labMs = performance.now() - t0;
    say(`lab and leasehold serve up in ${(labMs / 1000).toFixed(1)} s`);
    const node = cloud.uuid['bench-net-1']!;
    const owner = await cloud.user('bench-owner', 'bench-owners', 'member');
    const lessee = await cloud.user('bench-lessee', 'bench-lessees', 'member');
    await owner.api.ok('POST', '/v1/offers', { node_id: node });
    const { network } = await l.neutron.createVlanNetwork('bench-net', '10.99.0.0/24', { token: lessee.token });

    let lease = await leaseAndDeploy(l, lessee, node);
    say(`${sizes.networkAttaches} attaches per kind, interleaved`);
    const direct: number[] = [];
    const through: number[] = [];
    for (let i = 0; i < sizes.networkAttaches; i++) {
      for (const kind of i % 2 === 0 ? (['direct', 'leasehold'] as const) : (['leasehold', 'direct'] as const)) {
        if (kind === 'direct') {
          const start = performance.now();
          const port = await l.neutron.createPort(network.id, { token: lessee.token, name: 'bench-direct' });
          await l.attachVif(node, port.id);
          direct.push(performance.now() - start);
          await l.detachVif(node, port.id);
          await l.neutron.deletePort(port.id);
        } else {
          const start = performance.now();
          const attached = await lessee.api.ok('POST', `/v1/nodes/${node}/networks`, { network: network.id });
          through.push(performance.now() - start);
          await lessee.api.ok('DELETE', `/v1/nodes/${node}/networks/${attached.id}`);
        }
      }
    }

    say(`${sizes.networkEnds} lease ends with a network on the deployed node`);
    const vifsOff: number[] = [];
    const cleaning: number[] = [];
    let cleanedFirst = 0;
    for (let i = 0; i < sizes.networkEnds; i++) {
      if (i > 0) lease = await leaseAndDeploy(l, lessee, node);
      await lessee.api.ok('POST', `/v1/nodes/${node}/networks`, { network: network.id });
      const ended = await lessee.api.ok('DELETE', `/v1/leases/${lease}`);
      const endAt = Date.parse(ended.end as string);
      let off: number | null = null;
      let cleanAt: number | null = null;
      for (const deadline = Date.now() + 120_000; (off === null || cleanAt === null) && Date.now() < deadline; ) {
        const [vifs, state] = await Promise.all([l.listVifs(node), l.ironic.getNode(node)]);
        const now = Date.now();
        if (off === null && vifs.length === 0) off = now;
        if (cleanAt === null && state.provision_state !== 'active') cleanAt = now;
        await new Promise((r) => setTimeout(r, 20));
      }
      if (off === null || cleanAt === null) throw new Error('the hand-back did not finish within 120 s');
      if (cleanAt < off) cleanedFirst++;
      vifsOff.push(off - endAt);
      cleaning.push(cleanAt - endAt);
      await waitFor(async () => (await lessee.api.ok('GET', `/v1/leases/${lease}`)).state === 'ended', 180_000, 'the node cleaned');
    }
    return {
      result: {
        rounds: sizes.networkAttaches,
        attach: { direct: summarize(direct), leasehold: summarize(through) },
        ends: sizes.networkEnds,
        vifsOff: summarize(vifsOff),
        cleaningStarted: summarize(cleaning),
        cleanedFirst,
        labMs,
      },
    };
  } finally {
    await cloud?.stop().catch(() => undefined);
    await lab?.stop().catch(() => undefined);
  }
}

/** A lease of the node from now for an hour, handed over, and the node deployed through the gateway by its lessee. */
async function leaseAndDeploy(lab: NeutronLab, lessee: CloudUser, node: string): Promise<string> {
  const lease = await lessee.api.ok('POST', '/v1/leases', { nodes: [node], duration: '1h' });
  const project = lessee.project!.id;
  await lab.ironic.waitForNode(node, (n) => n.lessee === project && n.provision_state === 'available', { what: 'handed over', timeoutMs: 120_000 });
  const deploy = await lessee.api.call('PUT', `/baremetal/v1/nodes/${node}/states/provision`, { target: 'active' });
  if (deploy.status !== 202) throw new Error(`deploy refused: ${deploy.status} ${JSON.stringify(deploy.body)}`);
  await lab.ironic.waitForNode(node, (n) => n.provision_state === 'active' && !n.target_provision_state, { what: 'active', timeoutMs: 120_000 });
  await lab.waitForAgent(node);
  return lease.id as string;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
    if (await check()) return;
  }
  throw new Error(`not within ${timeoutMs} ms: ${what}`);
}

export function formatNetworks(s: NetworksSection | undefined, error: string | undefined): string {
  const title = '7. Tenant networks against a real Neutron: attach through Leasehold vs directly, and the hand-back at a lease end';
  if (error) return `${title}\nFAILED: ${error}`;
  if (!s) return '';
  if ('skipped' in s) return `${title}\n${s.skipped}`;
  const r = s.result;
  const row = (label: string, x: LatencySummary) => [label, fmt(x.p50), fmt(x.p90), fmt(x.max), String(x.n)];
  return [
    title,
    `Keystone, Neutron (ML2 baremetal, ironic-neutron-agent) and Ironic (neutron interface) from Debian's packages, leasehold serve in front; lab up in ${(r.labMs / 1000).toFixed(1)} s.`,
    `Attach on a deployed node, ${r.rounds} per kind, interleaved; hand-back: ${r.ends} lease end(s) with one network attached, times from the end instant.`,
    table([
      ['', 'p50 (ms)', 'p90 (ms)', 'max (ms)', 'n'],
      row('attach: port + VIF directly (Neutron, Ironic)', r.attach.direct),
      row('attach: POST /v1/nodes/{id}/networks', r.attach.leasehold),
      ['  through Leasehold / directly (p50)', fmt(r.attach.leasehold.p50 / r.attach.direct.p50, 2), '', '', ''],
      row('lease end → no VIF on the node', r.vifsOff),
      row('lease end → cleaning started', r.cleaningStarted),
    ]),
    `hand-backs where cleaning started before the networks were off: ${r.cleanedFirst} (must be 0)`,
  ].join('\n');
}
