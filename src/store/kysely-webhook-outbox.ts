import { sql, type Kysely, type SqlBool } from 'kysely';
import type { Database } from './database.js';
import { guarded as guard } from './db-errors.js';
import type { WebhookDelivery, WebhookOutbox } from './webhook-outbox.js';

export class KyselyWebhookOutbox implements WebhookOutbox {
  constructor(private readonly db: Kysely<Database>) {}

  claimDue(now: Date, limit: number, claimMs: number): Promise<readonly WebhookDelivery[]> {
    return guard(async () => {
      const until = new Date(now.getTime() + claimMs);
      const rows = await this.db
        .updateTable('webhook_deliveries')
        .set({ locked_until: until })
        .where(
          'id',
          'in',
          this.db
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('outcome', 'is', null)
            .where('due_at', '<=', now)
            .where(sql<SqlBool>`(locked_until is null or locked_until <= ${now}::timestamptz)`)
            .orderBy('due_at')
            .limit(limit)
            .forUpdate()
            .skipLocked(),
        )
        .returning(['id', 'type', 'lease_id', 'payload', 'attempts'])
        .execute();
      return rows;
    });
  }

  finish(id: string, outcome: 'delivered' | 'failed' | 'skipped', error: string | null, now: Date): Promise<void> {
    return guard(async () => {
      await this.db
        .updateTable('webhook_deliveries')
        .set((eb) => ({ outcome, finished_at: now, locked_until: null, last_error: error, attempts: eb('attempts', '+', outcome === 'skipped' ? 0 : 1) }))
        .where('id', '=', id)
        .execute();
    });
  }

  retry(id: string, dueAt: Date, error: string, _now: Date): Promise<void> {
    return guard(async () => {
      await this.db
        .updateTable('webhook_deliveries')
        .set((eb) => ({ due_at: dueAt, locked_until: null, last_error: error, attempts: eb('attempts', '+', 1) }))
        .where('id', '=', id)
        .execute();
    });
  }
}
