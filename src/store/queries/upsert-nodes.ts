import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database, NodesTable } from '../database.js';
import type { NodeRecord } from '../store.js';

/** The columns a sync writes; everything else (created_at, removed_at) is the store's own bookkeeping. */
const RECORD_COLUMNS = [
  'name',
  'resource_class',
  'owner',
  'lessee',
  'properties',
  'traits',
  'facts',
  'power_state',
  'provision_state',
  'target_provision_state',
  'maintenance',
  'maintenance_reason',
  'last_error',
  'console_enabled',
  'extra',
  'driver_updated_at',
  'synced_at',
] as const satisfies readonly (keyof NodesTable)[];

/** 20 parameters per row: 500 rows stay far below PostgreSQL's 65535-parameter limit. */
const ROWS_PER_STATEMENT = 500;

function toRow(node: NodeRecord, now: Date): Insertable<NodesTable> {
  return {
    id: node.id,
    name: node.name,
    resource_class: node.resource_class,
    owner: node.owner,
    lessee: node.lessee,
    properties: JSON.stringify(node.properties),
    traits: JSON.stringify(node.traits),
    facts: JSON.stringify(node.facts),
    power_state: node.power_state,
    provision_state: node.provision_state,
    target_provision_state: node.target_provision_state,
    maintenance: node.maintenance,
    maintenance_reason: node.maintenance_reason,
    last_error: node.last_error,
    console_enabled: node.console_enabled,
    extra: JSON.stringify(node.extra),
    driver_updated_at: node.driver_updated_at,
    synced_at: now,
    removed_at: null,
    created_at: now,
  };
}

/**
 * Inserts or overwrites nodes by id, un-removing any that were removed. An upsert rather than insert-or-update
 * so two replicas syncing at once cannot trip over each other's inserts. `nodes` must not repeat an id.
 */
export async function upsertNodes(
  db: Kysely<Database>,
  nodes: readonly NodeRecord[],
  now: Date,
): Promise<Selectable<NodesTable>[]> {
  const written: Selectable<NodesTable>[] = [];
  for (let start = 0; start < nodes.length; start += ROWS_PER_STATEMENT) {
    const chunk = nodes.slice(start, start + ROWS_PER_STATEMENT).map((node) => toRow(node, now));
    const rows = await db
      .insertInto('nodes')
      .values(chunk)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => {
          const set: Record<string, unknown> = { removed_at: null };
          for (const column of RECORD_COLUMNS) set[column] = eb.ref(`excluded.${column}`);
          return set as never;
        }),
      )
      .returningAll()
      .execute();
    written.push(...rows);
  }
  return written;
}
