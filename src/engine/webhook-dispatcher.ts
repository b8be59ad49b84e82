import { createHmac } from 'node:crypto';
import type { Clock, Timer } from '../domain/clock.js';
import type { Logger } from '../logger.js';
import type { Store } from '../store/store.js';
import type { WebhookDelivery } from '../store/webhook-outbox.js';

export interface WebhookOptions {
  /** Where to POST; null: deliveries are marked skipped (the outbox does not grow forever). */
  readonly url: string | null;
  /** HMAC-SHA256 key for the X-Leasehold-Signature header. */
  readonly secret: string | null;
  readonly pollMs?: number;
  readonly timeoutMs?: number;
  /** Attempts before a delivery is given up as failed (with backoff 2 s, 4 s, ... up to 1 h: about a day). */
  readonly maxAttempts?: number;
  readonly fetch?: typeof fetch;
}

/**
 * Signs a body the way receivers check it: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
 * The timestamp lets a receiver refuse replays.
 */
export function signWebhook(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/**
 * Sends lease notifications (started, ending soon, ended, failed) to the operator's webhook from the outbox:
 * at least once, retried with exponential backoff, signed. Runs with the lease engine (worker role); several
 * replicas share the outbox safely (SKIP LOCKED claims).
 */
export class WebhookDispatcher {
  private timer: Timer | null = null;
  private running: Promise<number> | null = null;
  private stopped = true;

  constructor(
    private readonly deps: { readonly store: Store; readonly clock: Clock; readonly logger: Logger },
    private readonly options: WebhookOptions,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.running?.catch(() => undefined);
  }

  /**
   * One pass: send what is due. Returns the number of deliveries handled. (Notices before a lease's end are
   * written by the lease timekeeper with their events; they reach the outbox like every other announced event.)
   */
  runOnce(): Promise<number> {
    this.running ??= this.pass().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pass(): Promise<number> {
    const { store, clock } = this.deps;
    const due = await store.webhooks.claimDue(clock.now(), 20, (this.options.timeoutMs ?? 10_000) * 3);
    await Promise.all(due.map((d) => this.deliver(d)));
    return due.length;
  }

  private async deliver(delivery: WebhookDelivery): Promise<void> {
    const { store, clock, logger } = this.deps;
    if (!this.options.url) {
      await store.webhooks.finish(delivery.id, 'skipped', null, clock.now());
      return;
    }
    const body = JSON.stringify({ id: delivery.id, ...delivery.payload });
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'leasehold-webhook/1',
      'x-leasehold-event': delivery.type,
      'x-leasehold-delivery': delivery.id,
    };
    if (this.options.secret) headers['x-leasehold-signature'] = signWebhook(this.options.secret, body, Math.floor(clock.now().getTime() / 1000));
    let error: string;
    try {
      const res = await (this.options.fetch ?? fetch)(this.options.url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 10_000),
      });
      if (res.ok) {
        await store.webhooks.finish(delivery.id, 'delivered', null, clock.now());
        logger.info({ delivery: delivery.id, type: delivery.type, lease: delivery.lease_id }, 'webhook delivered');
        return;
      }
      error = `HTTP ${res.status}`;
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    const attempt = delivery.attempts + 1;
    if (attempt >= (this.options.maxAttempts ?? 30)) {
      await store.webhooks.finish(delivery.id, 'failed', error, clock.now());
      logger.error({ delivery: delivery.id, type: delivery.type, error, attempts: attempt }, 'webhook given up');
      return;
    }
    const backoff = Math.min(2_000 * 2 ** (attempt - 1), 3_600_000);
    await store.webhooks.retry(delivery.id, new Date(clock.now().getTime() + backoff), error, clock.now());
    logger.warn({ delivery: delivery.id, type: delivery.type, error, retry_in_ms: backoff }, 'webhook failed; will retry');
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = this.deps.clock.setTimer(delayMs, () => {
      this.runOnce()
        .catch((err: unknown) => this.deps.logger.error({ err }, 'webhook pass failed'))
        .finally(() => this.schedule(this.options.pollMs ?? 2_000));
    });
  }
}
