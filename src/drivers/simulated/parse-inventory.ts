import { InvalidRequestError } from '../../domain/errors.js';
import { PowerState, ProvisionState } from '../hardware-driver.js';
import type { SimulatedNodeSpec } from './simulated-types.js';
import { stableUuid } from './stable-uuid.js';

/**
 * Reads `LEASEHOLD_SIMULATED_NODES`: a JSON array of nodes in Ironic's node JSON shape. This is startup
 * configuration, so every mistake is reported with the exact place (`LEASEHOLD_SIMULATED_NODES[2].properties.
 * memory_mb: expected a non-negative number`) rather than surfacing later as a strange scheduling result.
 */
export function parseInventory(json: string, source = 'LEASEHOLD_SIMULATED_NODES'): SimulatedNodeSpec[] {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    throw new InvalidRequestError(`${source}: not valid JSON (${(err as Error).message})`);
  }
  return validateInventory(value, source);
}

/** Validates a list of node specs (also used on the driver's constructor input); returns normalised copies. */
export function validateInventory(value: unknown, source: string): SimulatedNodeSpec[] {
  if (!Array.isArray(value)) throw invalid(source, 'expected a JSON array of nodes');
  const nodes = value.map((item, index) => validateNodeSpec(item, `${source}[${index}]`));
  const uuids = new Map<string, number>();
  const names = new Map<string, number>();
  nodes.forEach((node, index) => {
    const path = `${source}[${index}]`;
    const uuid = node.uuid ?? '';
    const sameUuid = uuids.get(uuid);
    if (sameUuid !== undefined) throw invalid(`${path}.uuid`, `${JSON.stringify(uuid)} is already used by ${source}[${sameUuid}]`);
    const sameName = names.get(node.name);
    if (sameName !== undefined) throw invalid(`${path}.name`, `${JSON.stringify(node.name)} is already used by ${source}[${sameName}]`);
    uuids.set(uuid, index);
    names.set(node.name, index);
  });
  return nodes;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Ironic node names: RFC 3986 unreserved characters. */
const NAME = /^[A-Za-z0-9._~-]{1,255}$/;
/** Standard (os-traits) and custom trait names. */
const TRAIT = /^[A-Z][A-Z0-9_]{0,254}$/;
const START_STATES: readonly string[] = [
  ProvisionState.Enroll,
  ProvisionState.Manageable,
  ProvisionState.Available,
  ProvisionState.Active,
  ProvisionState.CleanFailed,
  ProvisionState.DeployFailed,
  ProvisionState.Error,
];
const NUMERIC_PROPERTIES = ['memory_mb', 'cpus', 'local_gb'] as const;
/** The fields this driver reads. */
const KNOWN_FIELDS = new Set([
  'uuid', 'name', 'owner', 'lessee', 'resource_class', 'properties', 'traits', 'extra', 'driver_info',
  'provision_state', 'power_state', 'maintenance', 'maintenance_reason',
]);
/** Other fields of Ironic's node JSON: accepted and ignored, so `baremetal node show -f json` output can be pasted. */
const IGNORED_IRONIC_FIELDS = new Set([
  'driver', 'driver_internal_info', 'instance_info', 'instance_uuid', 'chassis_uuid', 'description', 'conductor_group',
  'conductor', 'created_at', 'updated_at', 'inspection_started_at', 'inspection_finished_at', 'provision_updated_at',
  'target_power_state', 'target_provision_state', 'target_raid_config', 'raid_config', 'last_error', 'reservation',
  'console_enabled', 'automated_clean', 'protected', 'protected_reason', 'retired', 'retired_reason', 'fault',
  'clean_step', 'deploy_step', 'allocation_uuid', 'network_data', 'shard', 'parent_node', 'firmware_interface',
  'bios_interface', 'boot_interface', 'console_interface', 'deploy_interface', 'inspect_interface',
  'management_interface', 'network_interface', 'power_interface', 'raid_interface', 'rescue_interface',
  'storage_interface', 'vendor_interface', 'links', 'ports', 'portgroups', 'states', 'volume', 'boot_mode',
  'secure_boot', 'disable_power_off', 'owner_project', 'lessee_project',
]);

function validateNodeSpec(value: unknown, path: string): SimulatedNodeSpec {
  const raw = record(value, path, 'expected a node object');
  for (const key of Object.keys(raw)) {
    if (!KNOWN_FIELDS.has(key) && !IGNORED_IRONIC_FIELDS.has(key)) {
      throw invalid(`${path}.${key}`, `unknown field (known: ${[...KNOWN_FIELDS].join(', ')})`);
    }
  }
  if (typeof raw.name !== 'string' || !NAME.test(raw.name)) {
    throw invalid(`${path}.name`, 'expected a name of letters, digits and . _ ~ - (1 to 255 characters)');
  }
  const name = raw.name;
  if (raw.uuid !== undefined && (typeof raw.uuid !== 'string' || !UUID.test(raw.uuid))) {
    throw invalid(`${path}.uuid`, 'expected a UUID like "0b6a5c3e-1111-4aaa-8aaa-000000000001"');
  }
  const uuid = typeof raw.uuid === 'string' ? raw.uuid.toLowerCase() : stableUuid(name);
  const properties = record(raw.properties, `${path}.properties`, 'expected an object (memory_mb, cpus, local_gb, cpu_arch, ...)');
  for (const key of NUMERIC_PROPERTIES) {
    if (!nonNegative(properties[key])) throw invalid(`${path}.properties.${key}`, 'expected a non-negative number');
  }
  if (properties.gpus !== undefined && !(nonNegative(properties.gpus) && Number.isInteger(properties.gpus))) {
    throw invalid(`${path}.properties.gpus`, 'expected a non-negative integer');
  }
  if (properties.cpu_arch !== undefined && (typeof properties.cpu_arch !== 'string' || properties.cpu_arch === '')) {
    throw invalid(`${path}.properties.cpu_arch`, 'expected a string such as "x86_64" or "aarch64"');
  }
  const caps = properties.capabilities;
  if (caps !== undefined && !(typeof caps === 'string' && validCapabilities(caps)) && !isRecord(caps)) {
    throw invalid(`${path}.properties.capabilities`, 'expected "key:value,key:value" (e.g. "boot_mode:uefi,cpu_vt:true")');
  }
  const traits = raw.traits === undefined ? [] : raw.traits;
  if (!Array.isArray(traits)) throw invalid(`${path}.traits`, 'expected an array of trait names');
  traits.forEach((trait, i) => {
    if (typeof trait !== 'string' || !TRAIT.test(trait)) {
      throw invalid(`${path}.traits[${i}]`, 'expected a trait name such as "CUSTOM_GPU_A100" (A-Z, 0-9, _)');
    }
  });
  const provisionState = raw.provision_state ?? ProvisionState.Available;
  if (typeof provisionState !== 'string' || !START_STATES.includes(provisionState)) {
    throw invalid(`${path}.provision_state`, `expected one of ${START_STATES.map((s) => JSON.stringify(s)).join(', ')}`);
  }
  const powerState = raw.power_state ?? PowerState.Off;
  if (powerState !== PowerState.On && powerState !== PowerState.Off) {
    throw invalid(`${path}.power_state`, 'expected "power on" or "power off"');
  }
  if (raw.maintenance !== undefined && typeof raw.maintenance !== 'boolean') {
    throw invalid(`${path}.maintenance`, 'expected true or false');
  }
  return {
    uuid,
    name,
    owner: optionalString(raw.owner, `${path}.owner`),
    lessee: optionalString(raw.lessee, `${path}.lessee`),
    resource_class: optionalString(raw.resource_class, `${path}.resource_class`),
    properties: structuredClone(properties),
    traits: [...(traits as string[])],
    extra: structuredClone(raw.extra === undefined ? {} : record(raw.extra, `${path}.extra`, 'expected an object')),
    driver_info: structuredClone(
      raw.driver_info === undefined ? {} : record(raw.driver_info, `${path}.driver_info`, 'expected an object'),
    ),
    provision_state: provisionState,
    power_state: powerState,
    maintenance: raw.maintenance === true,
    maintenance_reason: optionalString(raw.maintenance_reason, `${path}.maintenance_reason`),
  };
}

function validCapabilities(caps: string): boolean {
  if (caps.trim() === '') return true;
  return caps.split(',').every((pair) => /^\s*[^:,\s][^:,]*:[^,]*$/.test(pair));
}

function optionalString(value: unknown, path: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalid(path, 'expected a string or null');
  return value;
}

function nonNegative(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function record(value: unknown, path: string, expected: string): Record<string, unknown> {
  if (!isRecord(value)) throw invalid(path, expected);
  return value;
}

function invalid(path: string, message: string): InvalidRequestError {
  return new InvalidRequestError(`${path}: ${message}`, { details: { field: path } });
}
