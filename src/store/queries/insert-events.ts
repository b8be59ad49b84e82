import type { Kysely } from 'kysely';
import type { NewAuditEvent } from '../../domain/leasing.js';
import type { Database } from '../database.js';

/** Appends audit events (usually inside the transaction of the change they record). */
export async function insertEvents(db: Kysely<Database>, events: readonly NewAuditEvent[], now: Date): Promise<void> {
  if (events.length === 0) return;
  await db
    .insertInto('events')
    .values(
      events.map((e) => ({
        at: now,
        type: e.type,
        outcome: e.outcome ?? 'ok',
        actor_user_id: e.actor_user_id ?? null,
        actor: e.actor,
        node_id: e.node_id ?? null,
        lease_id: e.lease_id ?? null,
        offer_id: e.offer_id ?? null,
        project_id: e.project_id ?? null,
        owner_project_id: e.owner_project_id ?? null,
        message: e.message ?? '',
        details: JSON.stringify(e.details ?? {}),
      })),
    )
    .execute();
}
