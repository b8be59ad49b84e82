import { HTTP_STATUS, toLeaseholdError } from '../access/http-errors.js';
import type { NodeRuleName } from '../domain/policy-rules/default-rules.js';

/**
 * Ironic's wire shapes the gateway must keep so unmodified clients (the `baremetal` CLI, metalsmith) behave
 * normally: its error body, and which node fields its policy redacts for callers who may not read them.
 */

/** Ironic's error body: a JSON string inside `error_message` (`faultcode` Client for 4xx, Server for 5xx). */
export function ironicError(status: number, message: string): { readonly status: number; readonly body: string } {
  const inner = JSON.stringify({ faultstring: message, faultcode: status >= 500 ? 'Server' : 'Client', debuginfo: null });
  return { status, body: JSON.stringify({ error_message: inner }) };
}

/** Any thrown error as Ironic's error body, with the status of the one mapping (api/error-response.ts). */
export function ironicErrorFor(err: unknown): { readonly status: number; readonly body: string } {
  const error = toLeaseholdError(err);
  return ironicError(HTTP_STATUS[error.code], error.message);
}

/**
 * Node fields shown only to callers the named rule allows; others see what Ironic shows them, word for word
 * (ironic/api/controllers/v1/node.py node_sanitize), whether the field holds a value or not.
 */
export const REDACTED_FIELDS: ReadonlyArray<readonly [field: string, rule: NodeRuleName, shown: unknown]> = [
  ['driver_info', 'baremetal:node:get:driver_info', { content: '** Redacted - requires baremetal:node:get:driver_info permission. **' }],
  [
    'driver_internal_info',
    'baremetal:node:get:driver_internal_info',
    { content: '** Redacted - Requires baremetal:node:get:driver_internal_info permission. **' },
  ],
  ['last_error', 'baremetal:node:get:last_error', '** Value Redacted - Requires baremetal:node:get:last_error permission. **'],
  ['reservation', 'baremetal:node:get:reservation', '** Redacted - requires baremetal:node:get:reservation permission. **'],
];

const FIELD_RULES: Readonly<Record<string, NodeRuleName>> = {
  instance_info: 'baremetal:node:update_instance_info',
  instance_uuid: 'baremetal:node:update:instance_uuid',
  extra: 'baremetal:node:update_extra',
  owner: 'baremetal:node:update:owner',
  lessee: 'baremetal:node:update:lessee',
  chassis_uuid: 'baremetal:node:update:chassis_uuid',
  conductor_group: 'baremetal:node:update:conductor_group',
  shard: 'baremetal:node:update:shard',
  driver_info: 'baremetal:node:update:driver_info',
  properties: 'baremetal:node:update:properties',
  name: 'baremetal:node:update:name',
  network_data: 'baremetal:node:update:network_data',
  retired: 'baremetal:node:update:retired',
  retired_reason: 'baremetal:node:update:retired',
  driver: 'baremetal:node:update:driver_interfaces',
};

/**
 * The rule one operation of `PATCH /v1/nodes/{id}` needs, field by field as Ironic checks them (paths are `/field`
 * or `/field/key...`); fields not named fall under `baremetal:node:update`. Turning automated cleaning off is
 * its own rule, as in Ironic: every node is wiped between lessees unless the operator says otherwise.
 */
export function patchRule(op: { readonly path?: unknown; readonly value?: unknown }): NodeRuleName {
  const field = (typeof op.path === 'string' ? op.path : '').replace(/^\//, '').split('/')[0] ?? '';
  if (field === 'automated_clean' && op.value === false) return 'baremetal:node:disable_cleaning';
  if (field.endsWith('_interface')) return 'baremetal:node:update:driver_interfaces';
  return FIELD_RULES[field] ?? 'baremetal:node:update';
}

/** The rule `PUT /v1/nodes/{id}/states/provision` needs for a target (every verb is one Ironic rule). */
export const PROVISION_RULE: NodeRuleName = 'baremetal:node:set_provision_state';
