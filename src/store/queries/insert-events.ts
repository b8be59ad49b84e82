import type { Kysely } from 'kysely';
import type { NewAuditEvent } from '../../domain/leasing.js';
import type { Database } from '../database.js';

/** Lease events that are announced to the operator's webhook, by their public name. */
export const WEBHOOK_TYPES: Readonly<Record<string, string>> = {
  'lease.active': 'lease.started',
  'lease.ending_soon': 'lease.ending_soon',
  'lease.ended': 'lease.ended',
  'lease.failed': 'lease.failed',
  // A lease's nodes changing while it runs (issue 16): the lessee hears of each.
  'lease.node_replaced': 'lease.node_replaced',
  'lease.degraded': 'lease.degraded',
  'lease.node_returned': 'lease.node_returned',
  'lease.reclaim_scheduled': 'lease.reclaim_scheduled',
  'lease.offer_withdrawn': 'lease.offer_withdrawn',
  'lease.node_recovered': 'lease.node_recovered',
  // Auto-renew (issue 16): each step, and the one warning that it could not go on.
  'lease.renewed': 'lease.renewed',
  'lease.renewal_failed': 'lease.renewal_failed',
  // Sub-leasing (issue 16, item 6): the lessee hears its node was sub-leased; both lessees hear a sub-lease cut short.
  'lease.subleased': 'lease.subleased',
  'lease.sublease_ended': 'lease.sublease_ended',
};

/**
 * Appends audit events (usually inside the transaction of the change they record), and for lease events that
 * webhooks announce, the outbox row too — in the same transaction, so a notification is sent for exactly the
 * changes that committed.
 */
export async function insertEvents(db: Kysely<Database>, events: readonly NewAuditEvent[], now: Date): Promise<void> {
  if (events.length === 0) return;
  const rows = await db
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
    .returning(['seq', 'type', 'lease_id', 'message', 'details'])
    .execute();
  const announced = rows.filter((r) => WEBHOOK_TYPES[r.type] !== undefined && r.lease_id !== null);
  if (announced.length === 0) return;
  const leases = await db
    .selectFrom('leases')
    .select(['id', 'name', 'project_id', 'start_at', 'end_at', 'state'])
    .where('id', 'in', announced.map((r) => r.lease_id!))
    .execute();
  const byId = new Map(leases.map((l) => [l.id, l]));
  await db
    .insertInto('webhook_deliveries')
    .values(
      announced.map((r) => {
        const lease = byId.get(r.lease_id!);
        const type = WEBHOOK_TYPES[r.type]!;
        const payload = {
          type,
          at: now.toISOString(),
          message: r.message,
          details: r.details,
          lease: lease
            ? { id: lease.id, name: lease.name, project_id: lease.project_id, start: lease.start_at.toISOString(), end: lease.end_at.toISOString(), state: lease.state }
            : { id: r.lease_id },
        };
        return { event_seq: Number(r.seq), type, lease_id: r.lease_id, payload: JSON.stringify(payload), due_at: now, created_at: now };
      }),
    )
    .execute();
}
