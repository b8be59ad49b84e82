const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The id no row has: a filter on it matches nothing (an unknown project named in a filter, say). */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** Ids of Leasehold's own rows are UUIDs; anything else cannot name one (and must be a 404, not a 500). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
