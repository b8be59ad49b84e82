/**
 * Every entry of Ironic's project-scoped RBAC matrix (node entries, owner/lessee/third-party personas) where
 * Leasehold's gateway decides differently from Ironic, on purpose, with the reason. The replay
 * (rbac-replay.ironic.ts) holds the gateway to this table exactly: an entry here that Leasehold stops deviating on,
 * or a deviation missing from here, fails it. docs/gateway.md shows this table (`npx tsx scripts/gateway-doc.ts` writes it;
 * test/unit/gateway-doc.test.ts fails when the doc is stale).
 */
import type { Decision } from './rbac-matrix.js';

export interface Outcome {
  readonly name: string;
  readonly expected: Decision;
  readonly leasehold: Decision;
  readonly status: number;
}

export const REASONS = {
  'operator-enrols':
    'Creating and deleting nodes is the operator\'s: Leasehold runs as Ironic does with `project_admin_can_manage_own_nodes = false`. ' +
    'Nodes are enrolled in Ironic and join the pool from there; a project that could delete a node could take it from under a lease.',
  'lessee-from-leases':
    'The `lessee` field is written by Leasehold\'s engine from the lease table (and put back by the reconciler if changed by hand). ' +
    'An owner lends its nodes by offering them; a lessee set by hand would bypass the schedule, quotas and the wipe between lessees.',
  'wipe-at-end':
    'A lessee may not set `protected` or maintenance: either would stop Ironic from undeploying and cleaning the node when the lease ' +
    'ends, and the next lessee would get the previous one\'s disks. The owner (member and up) still may.',
  'lease-is-the-grant':
    'In Leasehold a project member is who leases; the lease is the grant, and lessees provision with their own tools (metalsmith, ' +
    'Foreman). So a lessee member, not only a lessee admin/manager, may deploy/undeploy, validate, write `instance_info` and attach VIFs ' +
    '(its own ports, where Neutron is configured) — only while its lease is active.',
  'lessee-drives-its-machine':
    'Ironic keeps the boot device and the serial console to owners. Leasehold\'s lessees control power, boot and console for the length ' +
    'of their lease (the product\'s promise), and lose them the instant it ends; the console is also proxied with its own short-lived tokens.',
  'vifs-checked-by-neutron':
    'Ironic attaches a VIF with the credentials of whoever calls it, and the gateway calls with Leasehold\'s own: Ironic would plug in any ' +
    'port it can see, another tenant\'s too. So the gateway checks the port in Neutron first (it must be the caller\'s project\'s) and ' +
    'records the attachment for the lease end; without a network service configured it cannot check, and attaches no VIF for a project ' +
    '(the replay runs without Neutron). With Neutron, owners and lessees attach their own ports (see "Tenant networks" in the README).',
  'leases-not-allocations':
    'Ironic\'s allocations are a second scheduler. In Leasehold the lease table is the only allocation: projects neither see nor delete ' +
    'Ironic allocations through the gateway (the operator can, or uses Leasehold\'s leases).',
} as const;

export type Reason = keyof typeof REASONS;

export interface Deviation {
  readonly leasehold: Decision;
  readonly reason: Reason;
}

const all = (reason: Reason, leasehold: Decision, names: readonly string[]): Record<string, Deviation> =>
  Object.fromEntries(names.map((name) => [name, { leasehold, reason }]));

export const DEVIATIONS: Readonly<Record<string, Deviation>> = {
  ...all('operator-enrols', 'denied', ['owner_admin_can_post_nodes', 'third_party_admin_can_post_nodes', 'owner_admin_can_delete_nodes']),
  ...all('lessee-from-leases', 'denied', ['owner_member_can_change_lessee', 'owner_admin_can_change_lessee', 'owner_manager_can_change_lessee']),
  ...all('wipe-at-end', 'denied', [
    'lessee_member_can_set_protected',
    'lessee_admin_can_set_maintenance',
    'lessee_manager_can_set_maintenance',
    'lessee_admin_can_unset_maintenance',
    'lessee_manager_can_unset_maintenance',
  ]),
  ...all('lease-is-the-grant', 'allowed', [
    'lessee_member_cannot_patch_instance_info',
    'lessee_member_cannot_patch_node_instance_info',
    'lessee_member_cannot_validate_node',
    'lessee_member_cannot_change_provision_state',
    'lessee_member_cannot_delete_vifs',
  ]),
  ...all('lessee-drives-its-machine', 'allowed', [
    'lessee_admin_cannot_set_boot_device',
    'lessee_manager_cannot_set_boot_device',
    'lessee_member_cannot_set_boot_device',
    'lessee_admin_cannot_get_boot_device',
    'lessee_member_cannot_get_boot_device',
    'lessee_admin_cannot_get_supported_boot_devices',
    'lessee_manager_cannot_get_supported_boot_devices',
    'lessee_admin_cannot_get_console',
    'lessee_manager_cannot_get_console',
    'lessee_member_cannot_get_console',
    'lessee_admin_cannot_set_console',
    'lessee_manager_cannot_set_console',
    'lessee_member_cannot_set_console',
  ]),
  ...all('vifs-checked-by-neutron', 'denied', [
    'owner_admin_can_post_vifs',
    'owner_manager_can_post_vifs',
    'owner_member_can_post_vifs',
    'lessee_admin_can_post_vifs',
    'lessee_manager_can_post_vifs',
  ]),
  ...all('leases-not-allocations', 'denied', [
    'owner_reader_can_read_node_allocation',
    'lessee_reader_can_read_node_allocation',
    'owner_admin_can_delete_allocation',
    'owner_manager_can_delete_allocation',
    'lessee_admin_can_delete_allocation',
    'lessee_manager_not_delete_allocation',
  ]),
};

export const DOC_START = '<!-- rbac-deviations:start (npx tsx scripts/gateway-doc.ts writes this part) -->';
export const DOC_END = '<!-- rbac-deviations:end -->';

const WORDS: Readonly<Record<Decision, string>> = { allowed: 'allowed', denied: '403', hidden: '404' };

/** The table as docs/gateway.md shows it: one section per reason, each entry with Ironic's and Leasehold's answer. */
export function deviationsMarkdown(): string {
  const lines = [DOC_START, ''];
  const count = Object.keys(DEVIATIONS).length;
  lines.push(`${count} entries, for ${Object.keys(REASONS).length} reasons:`, '');
  for (const [reason, text] of Object.entries(REASONS) as Array<[Reason, string]>) {
    const names = Object.entries(DEVIATIONS).filter(([, d]) => d.reason === reason);
    lines.push(`#### \`${reason}\` (${names.length})`, '', text, '', '| Matrix entry | Ironic | Leasehold |', '| --- | --- | --- |');
    for (const [name, d] of names) {
      const ironic = d.leasehold === 'allowed' ? '403' : 'allowed';
      lines.push(`| \`${name}\` | ${ironic} | ${WORDS[d.leasehold]} |`);
    }
    lines.push('');
  }
  lines.push(DOC_END);
  return lines.join('\n');
}
