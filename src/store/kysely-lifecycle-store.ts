import { sql, type Kysely, type SqlBool } from 'kysely';
import { isUuid } from '../domain/ids.js';
import type { Lease, NewAuditEvent } from '../domain/leasing.js';
import type { LifecycleStore, HeldAllocation, LeaveInput, ReplaceInput } from './lifecycle-store.js';
import type { Database } from './database.js';
import { guarded as guard } from './db-errors.js';
import { NotFoundError } from '../domain/errors.js';
import { loadLeases } from './leasing-rows.js';
import { leaveLease, recordFailure } from './queries/allocation-leave.js';
import { insertEvents } from './queries/insert-events.js';
import { tstzRange } from './queries/ranges.js';
import type { ReplacePolicy } from '../domain/replacement.js';

/** A lease's nodes changing while it runs, on Kysely (PGlite and PostgreSQL alike). */
export class KyselyLifecycleStore implements LifecycleStore {
  constructor(private readonly db: Kysely<Database>) {}

  leave(input: LeaveInput | ReplaceInput, events: readonly NewAuditEvent[], now: Date): Promise<Lease> {
    if (!isUuid(input.allocation_id)) return Promise.reject(new NotFoundError('allocation', input.allocation_id));
    return guard(() => leaveLease(this.db, input, events, now));
  }

  recordFailure(allocationId: string, failure: { readonly kind: string; readonly reason: string } | null, events: readonly NewAuditEvent[], now: Date): Promise<boolean> {
    if (!isUuid(allocationId)) return Promise.reject(new NotFoundError('allocation', allocationId));
    return guard(() => recordFailure(this.db, allocationId, failure, events, now));
  }

  setReplacePolicy(leaseId: string, policy: ReplacePolicy, events: readonly NewAuditEvent[], now: Date): Promise<Lease> {
    if (!isUuid(leaseId)) return Promise.reject(new NotFoundError('lease', leaseId));
    return guard(() =>
      this.db.transaction().execute(async (trx) => {
        const row = await trx.updateTable('leases').set({ replace_policy: policy, updated_at: now }).where('id', '=', leaseId).returningAll().executeTakeFirst();
        if (!row) throw new NotFoundError('lease', leaseId);
        await insertEvents(trx, events, now);
        return (await loadLeases(trx, [row]))[0]!;
      }),
    );
  }

  closeOffers(nodeId: string, at: Date, events: readonly NewAuditEvent[], now: Date): Promise<number> {
    return guard(() =>
      this.db.transaction().execute(async (trx) => {
        const later = await trx
          .updateTable('offers')
          .set({ withdrawn_at: now })
          .where('node_id', '=', nodeId)
          .where('withdrawn_at', 'is', null)
          .where(sql<SqlBool>`lower(period) >= ${at}::timestamptz`)
          .returning('id')
          .execute();
        const cut = await trx
          .updateTable('offers')
          .set({ period: tstzRange(sql`lower(period)`, at) })
          .where('node_id', '=', nodeId)
          .where('withdrawn_at', 'is', null)
          .where(sql<SqlBool>`lower(period) < ${at}::timestamptz and (upper(period) is null or upper(period) > ${at}::timestamptz)`)
          .returning('id')
          .execute();
        await insertEvents(trx, events, now);
        return later.length + cut.length;
      }),
    );
  }

  onNodeAfter(nodeId: string, from: Date): Promise<readonly HeldAllocation[]> {
    return guard(async () => {
      const rows = await this.db
        .selectFrom('allocations as a')
        .innerJoin('leases as l', 'l.id', 'a.lease_id')
        .select(['a.id', 'a.lease_id'])
        .where('a.node_id', '=', nodeId)
        .where('a.holds', '=', true)
        .where('a.leave_reason', 'is', null)
        .where('a.state', 'in', ['reserved', 'starting', 'active'])
        .where(sql<SqlBool>`upper(a.period) > ${from}::timestamptz`)
        .where('l.state', 'not in', ['ended', 'cancelled', 'failed'])
        .orderBy(sql`lower(a.period)`)
        .execute();
      if (rows.length === 0) return [];
      const leaseRows = await this.db.selectFrom('leases').selectAll().where('id', 'in', [...new Set(rows.map((r) => r.lease_id))]).execute();
      const leases = new Map((await loadLeases(this.db, leaseRows)).map((l) => [l.id, l]));
      return rows.map((r) => {
        const lease = leases.get(r.lease_id)!;
        return { lease, allocation: lease.allocations.find((a) => a.id === r.id)! };
      });
    });
  }
}
