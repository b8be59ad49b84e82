import type { Kysely } from 'kysely';
import { NotFoundError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import type { Lease, NewAuditEvent } from '../domain/leasing.js';
import type { Database } from './database.js';
import { guarded as guard } from './db-errors.js';
import type { NoticeStore } from './notice-store.js';
import { dueRenewals, finishAutoRenew, setAutoRenew } from './queries/auto-renew.js';
import { sendDueNotices, sentFor } from './queries/lease-notices.js';

/** Notices and auto-renew on Kysely (PGlite and PostgreSQL alike). */
export class KyselyNoticeStore implements NoticeStore {
  constructor(private readonly db: Kysely<Database>) {}

  sendDueNotices(now: Date, defaultOffsetsMs: readonly number[]): Promise<number> {
    return guard(() => sendDueNotices(this.db, now, defaultOffsetsMs));
  }

  sentNotices(leases: readonly { readonly id: string; readonly end: Date }[]): Promise<ReadonlyMap<string, ReadonlyMap<number, Date>>> {
    return guard(() => sentFor(this.db, leases.filter((l) => isUuid(l.id))));
  }

  setAutoRenew(leaseId: string, renew: { readonly step_ms: number; readonly until: Date } | null, events: readonly NewAuditEvent[], now: Date): Promise<Lease> {
    if (!isUuid(leaseId)) return Promise.reject(new NotFoundError('lease', leaseId));
    return guard(() => setAutoRenew(this.db, leaseId, renew, events, now));
  }

  dueRenewals(now: Date, limit: number): Promise<readonly string[]> {
    return guard(() => dueRenewals(this.db, now, limit));
  }

  finishAutoRenew(
    leaseId: string,
    end: Date,
    outcome: { readonly state: 'done' | 'stopped'; readonly rule: string | null; readonly message: string | null },
    events: readonly NewAuditEvent[],
    now: Date,
  ): Promise<boolean> {
    if (!isUuid(leaseId)) return Promise.resolve(false);
    return guard(() => finishAutoRenew(this.db, leaseId, end, outcome, events, now));
  }
}
