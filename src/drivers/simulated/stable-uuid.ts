import { createHash } from 'node:crypto';

/**
 * A UUID (v4 format: version and variant bits set) derived from a node's name, for nodes configured without one:
 * the same name gives the same id at every start, so leases, offers and audit rows stay attached to the node.
 */
export function stableUuid(name: string): string {
  const hex = createHash('sha256').update(`leasehold-simulated-node:${name}`).digest('hex');
  const variant = ((parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return [hex.slice(0, 8), hex.slice(8, 12), `4${hex.slice(13, 16)}`, `${variant}${hex.slice(17, 20)}`, hex.slice(20, 32)].join('-');
}
