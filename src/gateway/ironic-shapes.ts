import { HTTP_STATUS, toLeaseholdError } from '../api/error-response.js';
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
  const status = typeof error.details.http_status === 'number' ? error.details.http_status : HTTP_STATUS[error.code];
  return ironicError(status, error.message);
}

/** Node fields shown only to callers the named rule allows; others see "******" as Ironic shows them. */
export const REDACTED_FIELDS: ReadonlyArray<readonly [field: string, rule: NodeRuleName]> = [
  ['driver_info', 'baremetal:node:get:driver_info'],
  ['driver_internal_info', 'baremetal:node:get:driver_internal_info'],
  ['last_error', 'baremetal:node:get:last_error'],
  ['reservation', 'baremetal:node:get:reservation'],
];
export const REDACTED = '******';

/**
 * The rule a JSON Patch path of `PATCH /v1/nodes/{id}` needs (Ironic checks field by field the same way). Paths
 * are `/field` or `/field/key...`; fields not named here fall under `baremetal:node:update`.
 */
export function patchRule(path: string): NodeRuleName {
  const field = path.replace(/^\//, '').split('/')[0] ?? '';
  if (field === 'instance_info' || field === 'instance_uuid') return 'baremetal:node:update_instance_info';
  if (field === 'extra') return 'baremetal:node:update_extra';
  if (field === 'owner') return 'baremetal:node:update:owner';
  if (field === 'lessee') return 'baremetal:node:update:lessee';
  if (field === 'driver_info') return 'baremetal:node:update:driver_info';
  if (field === 'properties') return 'baremetal:node:update:properties';
  if (field === 'name') return 'baremetal:node:update:name';
  if (field === 'driver' || field.endsWith('_interface')) return 'baremetal:node:update:driver_interfaces';
  return 'baremetal:node:update';
}

/** The rule `PUT /v1/nodes/{id}/states/provision` needs for a target (every verb is one Ironic rule). */
export const PROVISION_RULE: NodeRuleName = 'baremetal:node:set_provision_state';
