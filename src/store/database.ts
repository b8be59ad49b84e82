import type { ColumnType, Generated, RawBuilder } from 'kysely';

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
  /** A JSON array of ms, or null (0011). */
  notice_offsets_ms: ColumnType<unknown[] | null, string | null | undefined, string | null>;
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

export interface ConsoleTokensTable {
  id: Generated<string>;
  node_id: string;
  /** A local user's; null for a Keystone user's token (see `principal`). */
  user_id: string | null;
  /** Who a Keystone user's token was issued to: `{userId, userName, role, projectId, projectName}`. */
  principal: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  token_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
}

export interface NetworkAttachmentsTable {
  id: Generated<string>;
  node_id: string;
  project_id: string;
  lease_id: string | null;
  network_id: string;
  network_name: string;
  segmentation_id: number | null;
  port_id: string | null;
  port_created: Generated<boolean>;
  nic_id: string | null;
  mac: string | null;
  trunk_id: Generated<string | null>;
  trunk_created: Generated<boolean>;
  tagged: JsonWithDefault<unknown[]>;
  state: string;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  ended_at: NullableTimestamp;
  last_error: Generated<string | null>;
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
  quarantined_at: NullableTimestamp;
  quarantine_reason: string | null;
}

/**
 * tstzrange columns are written with `tstzrange(start, end, '[)')` and read through `lower()`/`upper()`, never
 * as range text. bigint columns (durations in ms) come back from pg as strings: read them through Number().
 */
type Range = ColumnType<string, RawBuilder<unknown>, RawBuilder<unknown>>;
type BigintMs = ColumnType<string | number | null, number | null, number | null>;

export interface OffersTable {
  id: Generated<string>;
  node_id: string;
  project_id: string;
  period: Range;
  max_lease_ms: BigintMs;
  min_lease_ms: BigintMs;
  allowed_projects: ColumnType<string[] | null, string[] | null, string[] | null>;
  created_by: string | null;
  created_at: Timestamp;
  withdrawn_at: NullableTimestamp;
  reclaim_notice_ms: ColumnType<string | number | null, number | null | undefined, number | null>;
  /** numeric(14, 4): pg answers a decimal string. Migration 0014. */
  price_per_node_hour: ColumnType<string | null, string | null | undefined, string | null>;
  currency: ColumnType<string | null, string | null | undefined, string | null>;
  extension_window_ms: ColumnType<string | number | null, number | null | undefined, number | null>;
  extension_max_ahead_ms: ColumnType<string | number | null, number | null | undefined, number | null>;
  max_total_ms: ColumnType<string | number | null, number | null | undefined, number | null>;
  /** The allocation a sub-offer is carved from (0012), or null for an owner's offer. */
  parent_allocation_id: Generated<string | null>;
  /** Canonical weekly rules and their IANA timezone (0015), both null: the whole period. */
  weekly_rules: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  weekly_timezone: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface LeasesTable {
  id: Generated<string>;
  name: string;
  project_id: string;
  created_by: string | null;
  start_at: Timestamp;
  end_at: Timestamp;
  state: string;
  request: Json<Record<string, unknown>>;
  created_at: Timestamp;
  updated_at: Timestamp;
  cancelled_at: NullableTimestamp;
  ending_soon_sent_at: NullableTimestamp;
  replace_policy: Generated<string>;
  auto_renew_step_ms: ColumnType<string | number | null, number | null | undefined, number | null>;
  auto_renew_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
  auto_renew_state: ColumnType<string | null, string | null | undefined, string | null>;
  auto_renew_rule: ColumnType<string | null, string | null | undefined, string | null>;
  auto_renew_message: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface LeaseNoticesTable {
  lease_id: string;
  offset_ms: ColumnType<string | number, number, number>;
  end_at: Timestamp;
  sent_at: Timestamp;
  announced: Generated<boolean>;
}

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  event_seq: number | null;
  type: string;
  lease_id: string | null;
  payload: Json<Record<string, unknown>>;
  due_at: Timestamp;
  attempts: Generated<number>;
  last_error: string | null;
  locked_until: NullableTimestamp;
  outcome: string | null;
  finished_at: NullableTimestamp;
  created_at: Timestamp;
}

export interface AllocationsTable {
  id: Generated<string>;
  lease_id: string;
  node_id: string;
  group_index: number;
  state: string;
  step: string | null;
  period: Range;
  blocked: Range;
  holds: Generated<boolean>;
  last_error: string | null;
  updated_at: Timestamp;
  node_maintenance_at: NullableTimestamp;
  leave_reason: Generated<string | null>;
  left_at: NullableTimestamp;
  replaces: Generated<string | null>;
  /** The allocation this sub-allocation is carved from (0012), or null. */
  parent_allocation_id: Generated<string | null>;
  failure: Generated<string | null>;
  failure_kind: Generated<string | null>;
  /** When it stopped holding its node back from the next lessee (migration 0014). */
  freed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

/** What an allocation was when it was written: node, owner, class, facts, price (migration 0014, a trigger). */
export interface UsageRecordsTable {
  allocation_id: string;
  lease_id: string;
  node_id: string;
  node_name: string | null;
  lessee_project_id: string;
  owner_project_id: string | null;
  resource_class: string | null;
  facts: Json<Record<string, unknown>>;
  offer_id: string | null;
  price_per_node_hour: string | null;
  currency: string | null;
  recorded_at: Timestamp;
}

export interface LeaseTasksTable {
  id: Generated<string>;
  lease_id: string;
  allocation_id: string | null;
  kind: string;
  due_at: Timestamp;
  attempts: Generated<number>;
  last_error: string | null;
  locked_by: string | null;
  locked_until: NullableTimestamp;
  done_at: NullableTimestamp;
  created_at: Timestamp;
}

export interface EventsTable {
  seq: ColumnType<string, never, never>;
  at: Timestamp;
  type: string;
  outcome: Generated<string>;
  actor_user_id: string | null;
  actor: string;
  node_id: string | null;
  lease_id: string | null;
  offer_id: string | null;
  project_id: string | null;
  owner_project_id: string | null;
  message: Generated<string>;
  details: JsonWithDefault<Record<string, unknown>>;
}

export interface SimulatedNodesTable {
  uuid: string;
  name: string;
  state: Json<Record<string, unknown>>;
  version: ColumnType<string, string | undefined, string | RawBuilder<string>>;
  changed_xid: ColumnType<string, never, never>;
  updated_at: Timestamp;
}

export interface SchemaMigrationsTable {
  version: number;
  name: string;
  applied_at: Timestamp;
}

export interface LeaderLeasesTable {
  name: string;
  holder: string;
  until: Timestamp;
}

export interface Database {
  projects: ProjectsTable;
  users: UsersTable;
  api_tokens: ApiTokensTable;
  console_tokens: ConsoleTokensTable;
  network_attachments: NetworkAttachmentsTable;
  nodes: NodesTable;
  offers: OffersTable;
  leases: LeasesTable;
  lease_notices: LeaseNoticesTable;
  allocations: AllocationsTable;
  usage_records: UsageRecordsTable;
  lease_tasks: LeaseTasksTable;
  events: EventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  leader_leases: LeaderLeasesTable;
  simulated_nodes: SimulatedNodesTable;
  schema_migrations: SchemaMigrationsTable;
}
