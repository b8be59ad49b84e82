/**
 * Leasehold's default node policy, named after Ironic's `baremetal:node:*` rules (ironic/common/policy.py, Zed)
 * so an operator who knows Ironic's policy file knows this one. The relation to the node is Leasehold's: the owner
 * is the project Ironic's `owner` names; the lessee is the project with an active lease on the node *in
 * Leasehold's lease table at the instant of the request* — access starts and ends exactly with the lease.
 *
 * Where these differ from Ironic's project-scoped defaults, on purpose (docs/gateway.md lists them):
 * - A lessee member (not only a lessee admin/manager) may deploy/undeploy, set the boot device and use the
 *   console during its lease: in Leasehold the lease *is* the grant, and lessees provision with their own tools.
 * - Nobody but the operator changes `owner` or `lessee`: the owner is the pool's bookkeeping and the lessee is
 *   written by Leasehold's engine from the lease table.
 * - Creating and deleting nodes is the operator's (enrolment happens in Ironic, then shows up in the pool).
 */
export const DEFAULT_RULES = {
  // Building blocks.
  is_owner_member: 'is_node_owner and role:member',
  is_lessee_member: 'is_node_lessee and role:member',
  node_reader: 'is_admin or is_node_owner or is_node_lessee',
  node_operator: 'is_admin or rule:is_owner_member or rule:is_lessee_member',
  node_manager: 'is_admin or rule:is_owner_member',

  // Reading.
  'baremetal:node:list': '@', // filtered: each caller lists only the nodes it may see
  'baremetal:node:get': 'rule:node_reader',
  'baremetal:node:get_states': 'rule:node_reader',
  'baremetal:node:traits:list': 'rule:node_reader',
  'baremetal:node:vif:list': 'rule:node_reader',
  'baremetal:node:get_boot_device': 'rule:node_operator',
  'baremetal:node:get_console': 'rule:node_operator',
  // Fields shown to others redacted ("******"), as Ironic does for lessees.
  'baremetal:node:get:driver_info': 'is_admin or is_node_owner',
  'baremetal:node:get:driver_internal_info': 'is_admin or is_node_owner',
  'baremetal:node:get:last_error': 'is_admin or is_node_owner',
  'baremetal:node:get:reservation': 'is_admin or is_node_owner',

  // Changing the node (PATCH): each field group has its rule; `update` covers the fields not named below.
  'baremetal:node:update': 'rule:node_manager',
  'baremetal:node:update:owner': 'is_admin',
  'baremetal:node:update:lessee': 'is_admin',
  'baremetal:node:update:driver_info': 'rule:node_manager',
  'baremetal:node:update:driver_interfaces': 'rule:node_manager',
  'baremetal:node:update:properties': 'rule:node_manager',
  'baremetal:node:update:name': 'rule:node_manager',
  'baremetal:node:update_extra': 'rule:node_operator',
  'baremetal:node:update_instance_info': 'rule:node_operator',
  'baremetal:node:create': 'is_admin',
  'baremetal:node:delete': 'is_admin',

  // Acting on the node.
  'baremetal:node:set_power_state': 'rule:node_operator',
  'baremetal:node:set_boot_device': 'rule:node_operator',
  'baremetal:node:set_provision_state': 'rule:node_operator',
  'baremetal:node:set_console_state': 'rule:node_operator',
  'baremetal:node:validate': 'rule:node_operator',
  'baremetal:node:vif:attach': 'rule:node_operator',
  'baremetal:node:vif:detach': 'rule:node_operator',
  'baremetal:node:traits:set': 'rule:node_manager',
  'baremetal:node:traits:delete': 'rule:node_manager',
  'baremetal:node:set_maintenance': 'rule:node_manager',
  'baremetal:node:clear_maintenance': 'rule:node_manager',
} as const satisfies Readonly<Record<string, string>>;

/** Rules that Leasehold checks (the rest are building blocks an operator may add to and refer to). */
export type NodeRuleName = Extract<keyof typeof DEFAULT_RULES, `baremetal:${string}`>;
