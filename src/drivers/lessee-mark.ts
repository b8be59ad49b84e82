import type { DriverNode, HardwareDriver, NodeMarks } from './hardware-driver.js';

/**
 * Ironic's picture of who holds a node, which Leasehold keeps in step with its leases: `lessee` (the lease's
 * project, so Ironic's own owner/lessee policy agrees for tools that talk to Ironic) and `extra.leasehold_lease`
 * (which lease, so a mark is never taken for another lease's). The one place that reads and writes it: the
 * engine's hand-over and take-back, the reconciler's repairs, and the gateway (which lets nobody else write it).
 */
export const LEASE_MARK_KEY = 'leasehold_lease';

/** The lease a node is marked for, or null. */
export function leaseMarkOf(node: Pick<DriverNode, 'extra'>): string | null {
  const mark = node.extra[LEASE_MARK_KEY];
  return typeof mark === 'string' ? mark : mark === undefined || mark === null ? null : String(mark);
}

/** Whether Ironic shows the node handed to this lease: its project as lessee and its id as the mark. */
export function isMarkedFor(node: Pick<DriverNode, 'lessee' | 'extra'>, lease: { readonly id: string; readonly project_id: string }): boolean {
  return node.lessee === lease.project_id && leaseMarkOf(node) === lease.id;
}

/** Whether anything of a hand-over is left on the node (a lessee, or a mark). */
export function carriesMark(node: Pick<DriverNode, 'lessee' | 'extra'>): boolean {
  return node.lessee !== null || leaseMarkOf(node) !== null;
}

/**
 * Marks the node for the lease; `current` is the node as just read, so the driver writes without reading it again.
 * Resolves to the node as Ironic answered (to record it without a third request).
 */
export function setLeaseMark(
  driver: HardwareDriver,
  current: DriverNode,
  lease: { readonly id: string; readonly project_id: string },
): Promise<DriverNode> {
  return driver.updateNode(current.uuid, { lessee: lease.project_id, extra: { [LEASE_MARK_KEY]: lease.id } }, current);
}

/**
 * Clears the lessee and the mark; resolves to the node as Ironic answered. `current` may be the node as the store
 * recorded it (a stale record costs the driver a fresh read, never a wrong write).
 */
export function clearLeaseMark(driver: HardwareDriver, current: DriverNode | NodeMarks): Promise<DriverNode> {
  return driver.updateNode(current.uuid, { lessee: null, extra: { [LEASE_MARK_KEY]: null } }, current);
}
