import type { ColumnType, Generated } from 'kysely';

/**
 * Kysely's view of the schema in migrations/. jsonb columns are written as JSON text (`JSON.stringify`): both
 * drivers pass a string through untouched, while `pg` would turn a JS array into a PostgreSQL array literal.
 * Both drivers read timestamptz as Date and jsonb as parsed values.
 */
type Json<T> = ColumnType<T, string, string>;
type JsonWithDefault<T> = ColumnType<T, string | undefined, string>;
type Timestamp = ColumnType<Date, Date, Date>;
type NullableTimestamp = ColumnType<Date | null, Date | null | undefined, Date | null>;

export interface ProjectsTable {
  id: Generated<string>;
  name: string;
  description: Generated<string>;
  quota: JsonWithDefault<Record<string, unknown>>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface UsersTable {
  id: Generated<string>;
  name: string;
  project_id: string | null;
  role: string;
  created_at: Timestamp;
}

export interface ApiTokensTable {
  id: Generated<string>;
  user_id: string;
  token_hash: string;
  prefix: string;
  description: Generated<string>;
  created_at: Timestamp;
  expires_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
}

export interface NodesTable {
  id: string;
  name: string | null;
  resource_class: string | null;
  owner: string | null;
  lessee: string | null;
  properties: Json<Record<string, unknown>>;
  traits: Json<string[]>;
  facts: Json<Record<string, number | string | boolean>>;
  power_state: string | null;
  provision_state: string;
  target_provision_state: string | null;
  maintenance: boolean;
  maintenance_reason: string | null;
  last_error: string | null;
  console_enabled: boolean;
  extra: Json<Record<string, unknown>>;
  driver_updated_at: NullableTimestamp;
  synced_at: Timestamp;
  removed_at: NullableTimestamp;
  created_at: Timestamp;
}

export interface SchemaMigrationsTable {
  version: number;
  name: string;
  applied_at: Timestamp;
}

export interface Database {
  projects: ProjectsTable;
  users: UsersTable;
  api_tokens: ApiTokensTable;
  nodes: NodesTable;
  schema_migrations: SchemaMigrationsTable;
}
