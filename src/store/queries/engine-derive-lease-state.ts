import { AllocationState, LeaseState } from '../../domain/leasing.js';

/**
 * A lease's state derived from its allocations' states, as the engine moves them (the rules of the lifecycle
 * engine; the times, not this state, decide access):
 *
 * - a `cancelled` lease stays cancelled (the leasing store cancels a lease and its allocations together);
 * - allocations in state `cancelled` do not count: either the lease was cancelled, or the engine could not start
 *   the allocation at all (its node vanished from Ironic) and dropped it;
 * - no allocation left that counts → `failed` (not one node could be handed over);
 * - every counting allocation `released` or `quarantined` → `ended`;
 * - every counting allocation `active` → `active`;
 * - any counting allocation `releasing`, or some finished while others are not → `ending`;
 * - otherwise (some still `reserved` or `starting`) → unchanged (`pending` until every node is handed over).
 */
export function deriveLeaseState(current: string, allocationStates: readonly string[]): string {
  if (current === LeaseState.Cancelled) return current;
  const counting = allocationStates.filter((s) => s !== AllocationState.Cancelled);
  if (counting.length === 0) return allocationStates.length === 0 ? current : LeaseState.Failed;
  const isFinal = (s: string) => s === AllocationState.Released || s === AllocationState.Quarantined;
  if (counting.every(isFinal)) return LeaseState.Ended;
  if (counting.every((s) => s === AllocationState.Active)) return LeaseState.Active;
  if (counting.some((s) => s === AllocationState.Releasing || isFinal(s))) return LeaseState.Ending;
  return current;
}
