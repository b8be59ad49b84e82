import type { Kysely } from 'kysely';
import type { UsageSpan } from '../domain/usage.js';
import type { Database } from './database.js';
import { guarded as guard } from './db-errors.js';
import { usageSpans } from './queries/usage-spans.js';
import type { UsageFilter, UsageStore } from './usage-store.js';

/** Usage accounting on Kysely (PGlite and PostgreSQL alike). */
export class KyselyUsageStore implements UsageStore {
  constructor(private readonly db: Kysely<Database>) {}

  spans(filter: UsageFilter, now: Date): Promise<readonly UsageSpan[]> {
    return guard(() => usageSpans(this.db, filter, now));
  }
}
