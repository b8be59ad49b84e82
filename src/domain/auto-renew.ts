/**
 * Auto-renew (issue 16, item 4): the lessee asks the engine to extend its lease by `step` at a time, up to `until`,
 * while its nodes stay free and the offers' extension policy allows. The lease's side of it, pure data; the next
 * step is scheduling/renewal-step.ts, and the engine (engine/lease-timekeeper.ts) runs it.
 */
export type AutoRenewState = 'on' | 'done' | 'stopped';

export interface AutoRenew {
  readonly step_ms: number;
  /** The lessee's limit: the lease is never renewed past this. */
  readonly until: Date;
  /** `on` while renewing; `done` once it reached `until`; `stopped` once a rule refused a step (the lessee was told). */
  readonly state: AutoRenewState;
  /** The rule that stopped it (`stopped`), else null. */
  readonly rule: string | null;
  readonly message: string | null;
}

/**
 * A renewal is tried once the lease has at most one step left: a step ahead of the end, so a lessee whose lease
 * cannot be renewed hears it a full step before the end (and the extension window, when shorter, opens by then).
 */
export function renewalDueAt(lease: { readonly end: Date }, renew: Pick<AutoRenew, 'step_ms'>): Date {
  return new Date(lease.end.getTime() - renew.step_ms);
}
