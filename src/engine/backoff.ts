/** Retry delays for the lease engine: exponential from `baseMs`, capped at `maxMs`, read on the injected clock. */
export interface RetryPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { baseMs: 1_000, maxMs: 60_000 };

/** The delay before the next try after `failures` consecutive failures (1 → baseMs, 2 → 2 × baseMs, …). */
export function backoffMs(failures: number, policy: RetryPolicy): number {
  const exponent = Math.min(Math.max(failures, 1) - 1, 30);
  return Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
}

/** Failures worth an audit event: the first of a run of failures, then every tenth (no flooding the log). */
export function isReportedFailure(failures: number): boolean {
  return failures === 1 || failures % 10 === 0;
}
