/**
 * The webhook outbox: deliveries written with the lease events they announce (queries/insert-events.ts), claimed
 * by the dispatcher with FOR UPDATE SKIP LOCKED so any number of worker replicas send each one once.
 */
export interface WebhookDelivery {
  readonly id: string;
  /** A public lease event type (queries/insert-events.ts's WEBHOOK_TYPES). */
  readonly type: string;
  readonly lease_id: string | null;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly attempts: number;
}

export interface WebhookOutbox {
  /** Claims up to `limit` due deliveries until `now + claimMs`. */
  claimDue(now: Date, limit: number, claimMs: number): Promise<readonly WebhookDelivery[]>;
  finish(id: string, outcome: 'delivered' | 'failed' | 'skipped', error: string | null, now: Date): Promise<void>;
  retry(id: string, dueAt: Date, error: string, now: Date): Promise<void>;
}
