-- 0001: identity (projects, users, tokens) and the synced inventory (nodes).
-- Runs inside one transaction holding the migration lock (src/store/migrate.ts); must work on PostgreSQL 15 and
-- PGlite (PostgreSQL 18). Timestamps have no defaults on purpose: the application's injectable clock sets them.

-- The lease tables (next migration) need an exclusion constraint over (node_id with =, period with &&):
-- `=` on text inside a GiST index comes from btree_gist.
create extension if not exists btree_gist;

create table projects (
  id          uuid primary key default gen_random_uuid(),
  name        text not null,
  description text not null default '',
  quota       jsonb not null default '{}'::jsonb,
  created_at  timestamptz not null,
  updated_at  timestamptz not null,
  constraint projects_name_key unique (name),
  constraint projects_name_not_empty check (name <> ''),
  constraint projects_quota_is_object check (jsonb_typeof(quota) = 'object')
);

create table users (
  id         uuid primary key default gen_random_uuid(),
  name       text not null,
  project_id uuid null references projects (id),
  role       text not null,
  created_at timestamptz not null,
  constraint users_name_key unique (name),
  constraint users_role_known check (role in ('reader', 'member', 'manager', 'admin')),
  -- Only operators may stand outside every project.
  constraint users_project_required check (role = 'admin' or project_id is not null)
);

create index users_project_id_idx on users (project_id, name);

create table api_tokens (
  id          uuid primary key default gen_random_uuid(),
  user_id     uuid not null references users (id) on delete cascade,
  token_hash  text not null,
  prefix      text not null,
  description text not null default '',
  created_at  timestamptz not null,
  expires_at  timestamptz null,
  revoked_at  timestamptz null,
  constraint api_tokens_token_hash_key unique (token_hash)
);

create index api_tokens_user_id_idx on api_tokens (user_id);
create index api_tokens_created_at_idx on api_tokens (created_at, id);

-- The inventory as last read from the hardware driver. `owner` stays raw (a project id or a name, as Ironic
-- holds it) and is resolved to a project at query time, so projects created after a sync still match.
create table nodes (
  id                     text primary key,
  name                   text null,
  resource_class         text null,
  owner                  text null,
  lessee                 text null,
  properties             jsonb not null default '{}'::jsonb,
  traits                 jsonb not null default '[]'::jsonb,
  facts                  jsonb not null default '{}'::jsonb,
  power_state            text null,
  provision_state        text not null,
  target_provision_state text null,
  maintenance            boolean not null default false,
  maintenance_reason     text null,
  last_error             text null,
  console_enabled        boolean not null default false,
  extra                  jsonb not null default '{}'::jsonb,
  driver_updated_at      timestamptz null,
  synced_at              timestamptz not null,
  -- Set when the driver stops listing the node: hidden from reads, kept for history (leases, audit).
  removed_at             timestamptz null,
  created_at             timestamptz not null,
  constraint nodes_traits_is_array check (jsonb_typeof(traits) = 'array')
);

create index nodes_owner_idx on nodes (owner);
-- The listing order (name, then id) for keyset pagination.
create index nodes_sort_idx on nodes ((coalesce(name, '')), id);
