import type { Lease } from '../api/client';
import { isFinishedLease } from './lease-states';

const FAST = 2000;
const SLOW = 30_000;
const TRANSITIONAL = new Set(['starting', 'releasing']);

/**
 * How soon to read a lease again. Every 2 s while it is not settled (allocations starting or being released, the
 * lease ending, or its start or end less than a minute away); every 30 s while it is merely running or waiting
 * (someone may extend or cancel it elsewhere); never once it is over and every node is back.
 */
export function leasePollMs(lease: Pick<Lease, 'state' | 'start' | 'end' | 'allocations'>, now: number = Date.now()): number | null {
  const moving = lease.state === 'ending' || lease.allocations.some((a) => TRANSITIONAL.has(a.state));
  if (moving) return FAST;
  if (isFinishedLease(lease.state)) return null;
  const next = lease.state === 'pending' ? Date.parse(lease.start) : Date.parse(lease.end);
  // At the instant itself the engine starts working: poll fast from a minute before until it has moved.
  return next - now < 60_000 ? FAST : SLOW;
}

/** Whether a lease is still changing on its own (the detail page says "updating"). */
export function isSettled(lease: Pick<Lease, 'state' | 'start' | 'end' | 'allocations'>, now: number = Date.now()): boolean {
  return leasePollMs(lease, now) !== FAST;
}
