import type { Kysely, Selectable } from 'kysely';
import { NotFoundError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import type { NewAuditEvent } from '../domain/leasing.js';
import { AttachmentState, LIVE_ATTACHMENT_STATES, type NetworkAttachment, type TaggedNetwork } from '../domain/networks.js';
import type { Database, NetworkAttachmentsTable } from './database.js';
import { guarded as guard } from './db-errors.js';
import type { AttachmentPatch, NetworkStore, NewAttachment } from './network-store.js';
import { insertEvents } from './queries/insert-events.js';

/** Network attachments on Kysely (PGlite and PostgreSQL alike). */
export class KyselyNetworkStore implements NetworkStore {
  constructor(private readonly db: Kysely<Database>) {}

  create(input: NewAttachment, events: readonly NewAuditEvent[], now: Date): Promise<NetworkAttachment> {
    return guard(() =>
      this.db.transaction().execute(async (trx) => {
        const row = await trx
          .insertInto('network_attachments')
          .values({
            node_id: input.node_id,
            project_id: input.project_id,
            lease_id: input.lease_id,
            network_id: input.network_id,
            network_name: input.network_name,
            segmentation_id: input.segmentation_id,
            port_id: input.port_id ?? null,
            nic_id: input.nic_id ?? null,
            mac: input.mac ?? null,
            tagged: JSON.stringify(input.tagged ?? []),
            state: input.state,
            created_by: input.created_by,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await insertEvents(trx, withAttachment(events, row.id), now);
        return toAttachment(row);
      }),
    );
  }

  update(id: string, patch: AttachmentPatch, events: readonly NewAuditEvent[], now: Date): Promise<NetworkAttachment> {
    if (!isUuid(id)) return Promise.reject(new NotFoundError('network attachment', id));
    return guard(() =>
      this.db.transaction().execute(async (trx) => {
        const ended = patch.state === AttachmentState.Detached || patch.state === AttachmentState.Failed;
        const { tagged, ...rest } = patch;
        const row = await trx
          .updateTable('network_attachments')
          .set({ ...rest, ...(tagged === undefined ? {} : { tagged: JSON.stringify(tagged) }), updated_at: now, ...(ended ? { ended_at: now } : {}) })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirst();
        if (!row) throw new NotFoundError('network attachment', id);
        await insertEvents(trx, withAttachment(events, id), now);
        return toAttachment(row);
      }),
    );
  }

  get(id: string): Promise<NetworkAttachment | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return guard(async () => {
      const row = await this.db.selectFrom('network_attachments').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toAttachment(row) : null;
    });
  }

  live(nodeId: string): Promise<readonly NetworkAttachment[]> {
    return guard(async () => {
      const rows = await this.db
        .selectFrom('network_attachments')
        .selectAll()
        .where('node_id', '=', nodeId)
        .where('state', 'in', LIVE_ATTACHMENT_STATES)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toAttachment);
    });
  }

  allLive(): Promise<readonly NetworkAttachment[]> {
    return guard(async () => {
      const rows = await this.db
        .selectFrom('network_attachments')
        .selectAll()
        .where('state', 'in', LIVE_ATTACHMENT_STATES)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(toAttachment);
    });
  }

  byPort(portId: string): Promise<NetworkAttachment | null> {
    return guard(async () => {
      const row = await this.db
        .selectFrom('network_attachments')
        .selectAll()
        .where('port_id', '=', portId)
        .where('state', 'in', LIVE_ATTACHMENT_STATES)
        .executeTakeFirst();
      return row ? toAttachment(row) : null;
    });
  }

  record(events: readonly NewAuditEvent[], now: Date): Promise<void> {
    return guard(() => insertEvents(this.db, events, now));
  }
}

function withAttachment(events: readonly NewAuditEvent[], id: string): NewAuditEvent[] {
  return events.map((e) => ({ ...e, details: { ...e.details, attachment_id: id } }));
}

function toAttachment(row: Selectable<NetworkAttachmentsTable>): NetworkAttachment {
  return {
    id: row.id,
    node_id: row.node_id,
    project_id: row.project_id,
    lease_id: row.lease_id,
    network_id: row.network_id,
    network_name: row.network_name,
    segmentation_id: row.segmentation_id,
    port_id: row.port_id,
    port_created: row.port_created,
    nic_id: row.nic_id,
    mac: row.mac,
    trunk_id: row.trunk_id,
    trunk_created: row.trunk_created,
    tagged: row.tagged as TaggedNetwork[],
    state: row.state as AttachmentState,
    created_by: row.created_by,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ended_at: row.ended_at,
    last_error: row.last_error,
  };
}
