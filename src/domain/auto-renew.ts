import type { ExtensionLimit, ExtensionRule } from './scheduling/extension-policy.js';

/**
 * Auto-renew (issue 16, item 4): the lessee asks the engine to extend its lease by `step` at a time, up to `until`,
 * while its nodes stay free and the offers' extension policy allows. Pure: what the next step is, given how far
 * the lease may be extended now (extension-policy.ts); the engine (engine/lease-timekeeper.ts) runs it.
 */
export type AutoRenewState = 'on' | 'done' | 'stopped';

export interface AutoRenew {
  readonly step_ms: number;
  /** The lessee's limit: the lease is never renewed past this. */
  readonly until: Date;
  /** `on` while renewing; `done` once it reached `until`; `stopped` once a rule refused a step (the lessee was told). */
  readonly state: AutoRenewState;
  /** The rule that stopped it (`stopped`), else null. */
  readonly rule: ExtensionRule | null;
  readonly message: string | null;
}

/**
 * A renewal is tried once the lease has at most one step left: a step ahead of the end, so a lessee whose lease
 * cannot be renewed hears it a full step before the end (and the extension window, when shorter, opens by then).
 */
export function renewalDueAt(lease: { readonly end: Date }, renew: Pick<AutoRenew, 'step_ms'>): Date {
  return new Date(lease.end.getTime() - renew.step_ms);
}

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
