import type { Kysely, Transaction } from 'kysely';
import { ConflictError, isLeaseholdError } from '../../domain/errors.js';
import { formatWeeklyRule } from '../../domain/scheduling/weekly-windows.js';
import type { NewAuditEvent, Offer } from '../../domain/leasing.js';
import type { Database } from '../database.js';
import { translateDbError } from '../db-errors.js';
import { selectOffers, toOffer } from '../leasing-rows.js';
import type { NewOffer } from '../leasing-store.js';
import { insertEvents } from './insert-events.js';
import { tstzRange } from './ranges.js';

/**
 * Inserts offers with their audit events in the caller's transaction, in order: all of them or (the transaction
 * rolled back by the error) none. An offer that overlaps another in force on its node is a ConflictError naming the
 * node (`details.node_id`), so a bulk offer can say which node a concurrent offer took.
 */
export async function insertOffers(
  trx: Transaction<Database> | Kysely<Database>,
  offers: readonly { readonly offer: NewOffer; readonly events: readonly NewAuditEvent[] }[],
  now: Date,
): Promise<Offer[]> {
  const ids: string[] = [];
  for (const { offer, events } of offers) {
    let id: string;
    try {
      ({ id } = await trx
        .insertInto('offers')
        .values({
          node_id: offer.node_id,
          project_id: offer.project_id,
          period: tstzRange(offer.start, offer.end),
          max_lease_ms: offer.max_lease_ms,
          min_lease_ms: offer.min_lease_ms,
          allowed_projects: offer.allowed_projects ? [...offer.allowed_projects] : null,
          created_by: offer.created_by,
          reclaim_notice_ms: offer.reclaim_notice_ms ?? null,
          price_per_node_hour: offer.price_per_node_hour ?? null,
          currency: offer.currency ?? null,
          extension_window_ms: offer.extension_window_ms ?? null,
          extension_max_ahead_ms: offer.extension_max_ahead_ms ?? null,
          max_total_ms: offer.max_total_ms ?? null,
          parent_allocation_id: offer.parent_allocation_id ?? null,
          weekly_rules: offer.weekly ? offer.weekly.rules.map(formatWeeklyRule) : null,
          weekly_timezone: offer.weekly ? offer.weekly.timezone : null,
          created_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow());
    } catch (err) {
      const mapped = isLeaseholdError(err) ? err : translateDbError(err);
      if (mapped instanceof ConflictError) {
        throw new ConflictError(mapped.message, { cause: err, details: { ...mapped.details, node_id: offer.node_id } });
      }
      throw mapped;
    }
    await insertEvents(trx, events.map((e) => ({ ...e, offer_id: id })), now);
    ids.push(id);
  }
  if (ids.length === 0) return [];
  const rows = await selectOffers(trx).where('o.id', 'in', ids).execute();
  const byId = new Map(rows.map((r) => [r.id, toOffer(r)]));
  return ids.map((id) => byId.get(id)!);
}
