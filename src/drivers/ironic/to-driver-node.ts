import { BackendUnavailableError } from '../../domain/errors.js';
import { PowerState } from '../hardware-driver.js';
import type { DriverNode } from '../hardware-driver.js';

/**
 * The node fields Leasehold reads, requested with `?fields=` so Ironic never sends `driver_info` (BMC
 * credentials), `instance_info` or `driver_internal_info`. `traits` needs 1.37 and `lessee` 1.65: always
 * available at the microversions this driver accepts. `updated_at` (like `uuid` and `created_at`) comes with
 * every node whatever `fields` says, and Ironic refuses it in `fields` ("Field updated_at is not a valid field").
 */
export const NODE_FIELDS = [
  'uuid',
  'name',
  'resource_class',
  'owner',
  'lessee',
  'properties',
  'traits',
  'extra',
  'power_state',
  'target_power_state',
  'provision_state',
  'target_provision_state',
  'maintenance',
  'maintenance_reason',
  'last_error',
  'console_enabled',
  'reservation',
] as const;

/** Keys dropped from every Ironic answer as soon as it is parsed, whatever was asked. */
const SECRET_KEYS = new Set(['driver_info', 'driver_internal_info', 'instance_info']);

/** Removes secret-bearing keys from a parsed Ironic answer (a node, or a collection of nodes), in place. */
export function dropSecrets(value: unknown): unknown {
  if (Array.isArray(value)) {
    for (const item of value) dropSecrets(item);
  } else if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (SECRET_KEYS.has(key)) delete record[key];
      else if (key === 'nodes' || key === 'node') dropSecrets(record[key]);
    }
  }
  return value;
}

const POWER_STATES: readonly string[] = Object.values(PowerState);

/** Ironic's node JSON → DriverNode, copying only the known fields (nothing else can slip through). */
export function toDriverNode(raw: unknown): DriverNode {
  if (raw === null || typeof raw !== 'object' || typeof (raw as { uuid?: unknown }).uuid !== 'string') {
    throw new BackendUnavailableError('Ironic answered with a node that has no uuid (an unexpected response)');
  }
  const n = raw as Record<string, unknown>;
  return {
    uuid: n.uuid as string,
    name: str(n.name),
    resource_class: str(n.resource_class),
    owner: str(n.owner),
    lessee: str(n.lessee),
    properties: record(n.properties),
    traits: traits(n.traits),
    extra: record(n.extra),
    power_state: power(n.power_state),
    target_power_state: power(n.target_power_state),
    provision_state: str(n.provision_state) ?? 'enroll',
    target_provision_state: str(n.target_provision_state),
    maintenance: n.maintenance === true,
    maintenance_reason: str(n.maintenance_reason),
    last_error: str(n.last_error),
    console_enabled: n.console_enabled === true,
    reservation: str(n.reservation),
    updated_at: timestamp(n.updated_at),
  };
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? structuredClone(value as Record<string, unknown>) : {};
}

/** `traits` is a list of strings in node answers; older shapes (`[{trait: ...}]`) are read too. */
function traits(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value
    .map((t) => (typeof t === 'string' ? t : str((t as { trait?: unknown } | null)?.trait)))
    .filter((t): t is string => t !== null);
}

function power(value: unknown): PowerState | null {
  return typeof value === 'string' && POWER_STATES.includes(value) ? (value as PowerState) : null;
}

/** Ironic writes `2026-11-21T06:25:54.123456+00:00`; DriverNode wants RFC 3339 UTC. */
function timestamp(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  // Ironic's timestamps carry an offset; one without is UTC, not local time.
  const ms = Date.parse(/(Z|[+-]\d\d:?\d\d)$/i.test(value) ? value : `${value}Z`);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}
