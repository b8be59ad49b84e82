const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The id no row has: a filter on it matches nothing (an unknown project named in a filter, say). */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** Ids of Leasehold's own rows are UUIDs; anything else cannot name one (and must be a 404, not a 500). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** What an id prefix may hold: the hex digits and dashes of the ids tables print (8 characters, say), never a LIKE wildcard. */
const ID_PREFIX = /^[0-9a-f-]{1,64}$/i;

export function isIdPrefix(value: string): boolean {
  return ID_PREFIX.test(value);
}

/**
 * The SQL LIKE pattern matching ids that start with `prefix` (lower case, as PostgreSQL prints uuids). Only hex
 * digits and dashes get through, so the pattern never holds `%` or `_` from the caller; anything else throws.
 */
export function idPrefixPattern(prefix: string): string {
  if (!isIdPrefix(prefix)) throw new RangeError(`not an id prefix: ${JSON.stringify(prefix)}`);
  return `${prefix.toLowerCase()}%`;
}
