import type { Selectable } from 'kysely';
import type { NodesTable } from '../database.js';
import type { NodeRecord } from '../store.js';

/**
 * True when the stored row already says what `record` says, so a sync can count it unchanged and skip the
 * write. jsonb does not keep key order, hence the order-insensitive comparison of objects.
 */
export function sameNode(row: Selectable<NodesTable>, record: NodeRecord): boolean {
  return (
    row.name === record.name &&
    row.resource_class === record.resource_class &&
    row.owner === record.owner &&
    row.lessee === record.lessee &&
    row.power_state === record.power_state &&
    row.provision_state === record.provision_state &&
    row.target_provision_state === record.target_provision_state &&
    row.maintenance === record.maintenance &&
    row.maintenance_reason === record.maintenance_reason &&
    row.last_error === record.last_error &&
    row.console_enabled === record.console_enabled &&
    (row.driver_updated_at?.getTime() ?? null) === (record.driver_updated_at?.getTime() ?? null) &&
    jsonEqual(row.properties, record.properties) &&
    jsonEqual(row.traits, record.traits) &&
    jsonEqual(row.facts, record.facts) &&
    jsonEqual(row.extra, record.extra)
  );
}

/** Equality of JSON values as jsonb sees them: object key order does not matter, array order does. */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  // `undefined` members vanish in JSON.stringify, so they do not count as keys.
  const aKeys = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const bKeys = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return (
    aKeys.length === bKeys.length &&
    aKeys.every((k) => jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}
