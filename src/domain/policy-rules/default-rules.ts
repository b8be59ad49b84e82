/**
 * Leasehold's default node policy, named after Ironic's `baremetal:node:*` rules and following their project-scoped
 * defaults (ironic/common/policy.py) so an operator who knows Ironic's policy file knows this one. Ironic's project
 * `admin` and `manager` are Leasehold's project `manager`; Leasehold's `admin` is the operator (Ironic's system
 * scope). The relation to the node is Leasehold's: the owner is the project Ironic's `owner` names; the lessee is
 * the project with an active lease on the node *in Leasehold's lease table at the instant of the request* — access
 * starts and ends exactly with the lease.
 *
 * Where these differ from Ironic's defaults it is on purpose; docs/gateway.md lists each difference with its reason
 * (and the RBAC replay, test/ironic/rbac-replay.ironic.ts, holds every one of them to Ironic's matrix):
 * - The lease is the grant: a lessee member (who may lease) may also deploy/undeploy, validate, attach VIFs, set the
 *   boot device and use the console while its lease lasts — Ironic keeps the boot device and the console to owners
 *   and the rest to lessee admins.
 * - A lessee changes no node field but `extra` and `instance_info` (what deploying needs): nothing it sets may
 *   outlive its lease or stop the wipe at its end (`protected`, `maintenance`, `automated_clean`).
 * - Nobody but the operator changes `owner` or `lessee`, creates or deletes nodes, or disables cleaning: the owner
 *   is the pool's bookkeeping, the lessee is written by Leasehold's engine from the lease table, and every node is
 *   wiped between lessees.
 */
export const DEFAULT_RULES = {
  // Building blocks (Ironic's PROJECT_OWNER_* / PROJECT_LESSEE_* check strings).
  is_owner_reader: 'is_node_owner',
  is_owner_member: 'is_node_owner and role:member',
  is_owner_manager: 'is_node_owner and role:manager',
  is_lessee_reader: 'is_node_lessee',
  is_lessee_member: 'is_node_lessee and role:member',
  node_reader: 'is_admin or rule:is_owner_reader or rule:is_lessee_reader',
  owner_reader: 'is_admin or rule:is_owner_reader',
  owner_member: 'is_admin or rule:is_owner_member',
  owner_manager: 'is_admin or rule:is_owner_manager',
  /** What a lease lets its holder do: Ironic's "owner member and lessee admin", widened to lessee members. */
  node_operator: 'is_admin or rule:is_owner_member or rule:is_lessee_member',
  /** The boot device: Ironic's is an owner admin's; in Leasehold the lessee also drives its leased machine. */
  boot_device: 'is_admin or rule:is_owner_manager or rule:is_lessee_member',

  // Reading.
  'baremetal:node:list': '@', // filtered: each caller lists only the nodes it may see
  'baremetal:node:get': 'rule:node_reader',
  'baremetal:node:get_states': 'rule:node_reader',
  'baremetal:node:traits:list': 'rule:node_reader',
  'baremetal:node:vif:list': 'rule:node_reader',
  'baremetal:node:bios:get': 'rule:node_reader',
  'baremetal:node:get_indicator_state': 'rule:node_reader',
  'baremetal:node:history:get': 'rule:owner_reader',
  'baremetal:node:inventory:get': 'rule:owner_reader',
  // Ports, port groups and volume connectors/targets of a node, read through the node (Foreman and metalsmith
  // need the MAC addresses); creating or changing them is the operator's, in Ironic.
  'baremetal:node:ports:list': 'rule:node_reader',
  'baremetal:node:volume:list': 'rule:node_reader',
  'baremetal:node:get_boot_device': 'rule:boot_device',
  // The console: Ironic's is owners' only; in Leasehold the lessee also uses it during its lease.
  'baremetal:node:get_console': 'rule:node_operator',
  // Fields shown to others redacted, in Ironic's words.
  'baremetal:node:get:driver_info': 'rule:owner_reader',
  'baremetal:node:get:driver_internal_info': 'rule:owner_reader',
  'baremetal:node:get:last_error': 'rule:owner_reader',
  'baremetal:node:get:reservation': 'rule:owner_reader',

  // Changing the node (PATCH): each field group has its rule; `update` covers the fields not named below.
  'baremetal:node:update': 'rule:owner_member',
  'baremetal:node:update:owner': 'is_admin',
  'baremetal:node:update:lessee': 'is_admin',
  'baremetal:node:update:chassis_uuid': 'is_admin',
  'baremetal:node:update:conductor_group': 'is_admin',
  'baremetal:node:update:shard': 'is_admin',
  'baremetal:node:disable_cleaning': 'is_admin',
  'baremetal:node:update:driver_info': 'rule:owner_member',
  'baremetal:node:update:driver_interfaces': 'rule:owner_manager',
  'baremetal:node:update:properties': 'rule:owner_member',
  'baremetal:node:update:name': 'rule:owner_member',
  'baremetal:node:update:instance_uuid': 'rule:owner_member',
  'baremetal:node:update:network_data': 'rule:owner_member',
  'baremetal:node:update:retired': 'rule:owner_member',
  'baremetal:node:update_extra': 'rule:node_operator',
  'baremetal:node:update_instance_info': 'rule:node_operator',
  'baremetal:node:create': 'is_admin',
  'baremetal:node:delete': 'is_admin',

  // Acting on the node.
  'baremetal:node:set_power_state': 'rule:node_operator',
  'baremetal:node:set_boot_mode': 'rule:node_operator',
  'baremetal:node:set_secure_boot': 'rule:node_operator',
  'baremetal:node:set_boot_device': 'rule:boot_device',
  'baremetal:node:set_console_state': 'rule:node_operator',
  'baremetal:node:set_provision_state': 'rule:node_operator',
  'baremetal:node:validate': 'rule:node_operator',
  'baremetal:node:vif:attach': 'rule:node_operator',
  'baremetal:node:vif:detach': 'rule:node_operator',
  'baremetal:node:inject_nmi': 'rule:owner_manager',
  'baremetal:node:set_indicator_state': 'rule:owner_member',
  'baremetal:node:set_raid_state': 'rule:owner_member',
  'baremetal:node:traits:set': 'rule:owner_manager',
  'baremetal:node:traits:delete': 'rule:owner_manager',
  // Ironic lets lessee admins set maintenance; in Leasehold a node in maintenance cannot be wiped at the lease end.
  'baremetal:node:set_maintenance': 'rule:owner_member',
  'baremetal:node:clear_maintenance': 'rule:owner_member',

  // Sub-leasing (Leasehold's own; Ironic has no such rule): offering a node one holds to another project within
  // one's own lease (POST /v1/offers by a lessee). `is_node_lessee` here means the caller's project holds an active or
  // upcoming allocation on the node; one level only, as ESI: a sub-lessee may not offer it on.
  'baremetal:node:sublease': 'rule:is_lessee_member and not is_node_sublessee',
} as const satisfies Readonly<Record<string, string>>;

/** Rules that Leasehold checks (the rest are building blocks an operator may add to and refer to). */
export type NodeRuleName = Extract<keyof typeof DEFAULT_RULES, `baremetal:${string}`>;
