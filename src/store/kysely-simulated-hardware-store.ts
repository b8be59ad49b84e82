import { sql, type Kysely } from 'kysely';
import type { Database } from './database.js';
import { guarded } from './db-errors.js';
import type { SimulatedHardwareChanges, SimulatedHardwareStore, SimulatedNodeRow } from '../domain/simulated-hardware-store.js';

interface Row {
  uuid: string;
  name: string;
  state: Record<string, unknown>;
  version: string;
}

const columns = sql`uuid, name, state, version::text as version`;

/** SimulatedHardwareStore on Kysely (PGlite and PostgreSQL alike). */
export class KyselySimulatedHardwareStore implements SimulatedHardwareStore {
  constructor(private readonly db: Kysely<Database>) {}

  changes(watermark: string | null): Promise<SimulatedHardwareChanges> {
    return guarded(async () => {
      // The watermark is the oldest transaction still running at this read: anything it or a later one writes is
      // stamped at or after it, so the next read with it misses nothing (a row may come twice; applying is idempotent).
      const { rows } = await sql<Row & { watermark: string }>`
        select w.xmin::text as watermark, c.*
          from (select pg_snapshot_xmin(pg_current_snapshot()) as xmin) w
          left join lateral (select ${columns} from simulated_nodes where changed_xid >= ${watermark ?? '0'}::xid8) c on true`.execute(this.db);
      return { watermark: rows[0]!.watermark, nodes: rows.filter((r) => r.uuid !== null).map(toRow) };
    });
  }

  enrol(nodes: readonly Omit<SimulatedNodeRow, 'version'>[], now: Date): Promise<readonly SimulatedNodeRow[]> {
    return guarded(async () => {
      if (nodes.length === 0) return [];
      // In slices: 3 parameters a node, far under PostgreSQL's 65,535 even for a 10,000-node demo inventory.
      for (let i = 0; i < nodes.length; i += 5_000) {
        await this.db
          .insertInto('simulated_nodes')
          .values(nodes.slice(i, i + 5_000).map((n) => ({ uuid: n.uuid, name: n.name, state: JSON.stringify(n.state), updated_at: now })))
          .onConflict((oc) => oc.column('uuid').doNothing())
          .execute();
      }
      const { rows } = await sql<Row>`select ${columns} from simulated_nodes where uuid = any(${nodes.map((n) => n.uuid)}::text[])`.execute(this.db);
      return rows.map(toRow);
    });
  }

  save(uuid: string, state: Readonly<Record<string, unknown>>, version: string, now: Date): Promise<SimulatedNodeRow | null> {
    return guarded(async () => {
      const { rows } = await sql<Row>`
        update simulated_nodes set state = ${JSON.stringify(state)}::jsonb, version = version + 1, updated_at = ${now}
         where uuid = ${uuid} and version = ${version}::bigint
        returning ${columns}`.execute(this.db);
      return rows[0] ? toRow(rows[0]) : null;
    });
  }

  remove(uuid: string): Promise<void> {
    return guarded(async () => {
      await this.db.deleteFrom('simulated_nodes').where('uuid', '=', uuid).execute();
    });
  }
}

function toRow(r: Row): SimulatedNodeRow {
  return { uuid: r.uuid, name: r.name, state: r.state, version: String(r.version) };
}
