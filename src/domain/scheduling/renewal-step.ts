import { renewalDueAt, type AutoRenew } from '../auto-renew.js';
import type { ExtensionLimit, ExtensionRule } from './extension-policy.js';

/** The next auto-renew step (domain/auto-renew.ts), given how far the lease may be extended now (extension-policy.ts). */
export type RenewalDecision =
  /** Extend the lease to `end` (a whole step, or less when `until` or a rule is nearer). */
  | { readonly kind: 'extend'; readonly end: Date }
  /** The lessee's `until` is reached: nothing more to do. */
  | { readonly kind: 'done' }
  /** Not yet (the extension window opens at `at`). */
  | { readonly kind: 'wait'; readonly at: Date }
  /** A rule refuses any extension: stop and tell the lessee which. */
  | { readonly kind: 'stop'; readonly rule: ExtensionRule | null; readonly latest: Date };

/** The next step of auto-renew for a lease ending at `lease.end`, given how far it may be extended now. */
export function nextRenewal(lease: { readonly end: Date }, renew: Pick<AutoRenew, 'step_ms' | 'until'>, limit: ExtensionLimit, now: Date): RenewalDecision {
  const end = lease.end.getTime();
  const until = renew.until.getTime();
  if (end >= until) return { kind: 'done' };
  if (now.getTime() < renewalDueAt(lease, renew).getTime()) return { kind: 'wait', at: renewalDueAt(lease, renew) };
  if (!limit.window_open && limit.window_opens_at !== null) return { kind: 'wait', at: new Date(limit.window_opens_at) };
  const target = Math.min(end + renew.step_ms, until);
  if (limit.latest >= target) return { kind: 'extend', end: new Date(target) };
  // Part of a step is still worth having: the next attempt then meets the rule and says so.
  if (limit.latest > end) return { kind: 'extend', end: new Date(limit.latest) };
  return { kind: 'stop', rule: limit.rule, latest: new Date(end) };
}
