const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids of Leasehold's own rows are UUIDs; anything else cannot name one (and must be a 404, not a 500). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
