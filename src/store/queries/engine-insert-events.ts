import type { Kysely } from 'kysely';
import type { NewAuditEvent } from '../../domain/leasing.js';
import type { Database } from '../database.js';
import { insertEvents } from './insert-events.js';

/** What the engine knows about every event it writes for one allocation; an event's own fields win. */
export interface EventDefaults {
  readonly lease_id: string;
  readonly node_id: string;
  /** The lessee. */
  readonly project_id: string;
  /** The node's owner resolved to a project, when it resolves. */
  readonly owner_project_id: string | null;
}

/** Appends audit events at `now`; an event without a user (`actor_user_id` null) is the engine's: actor "engine". */
export async function insertEngineEvents(
  db: Kysely<Database>,
  events: readonly NewAuditEvent[],
  defaults: EventDefaults,
  now: Date,
): Promise<void> {
  await insertEvents(
    db,
    events.map((e) => ({
      ...e,
      actor: e.actor_user_id ? e.actor : 'engine',
      node_id: e.node_id !== undefined ? e.node_id : defaults.node_id,
      lease_id: e.lease_id !== undefined ? e.lease_id : defaults.lease_id,
      project_id: e.project_id !== undefined ? e.project_id : defaults.project_id,
      owner_project_id: e.owner_project_id !== undefined ? e.owner_project_id : defaults.owner_project_id,
    })),
    now,
  );
}
