-- 0002: offers (owner policy), leases, allocations (no double booking), the lease engine's due tasks, the
-- audit log, and quarantine. Durations are stored as milliseconds (bigint).

-- Leasehold's own view of a node, never overwritten by the inventory sync: a node whose cleaning failed is
-- quarantined (no new leases) until its owner or the operator clears it.
alter table nodes add column quarantined_at timestamptz null;
alter table nodes add column quarantine_reason text null;

create table offers (
  id                 uuid primary key default gen_random_uuid(),
  node_id            text not null references nodes (id),
  -- The project that offers the node (its owner at the time).
  project_id         uuid not null references projects (id),
  period             tstzrange not null,
  max_lease_ms       bigint null,
  min_lease_ms       bigint null,
  -- null: every project may lease; otherwise only these.
  allowed_projects   uuid[] null,
  created_by         uuid null references users (id),
  created_at         timestamptz not null,
  withdrawn_at       timestamptz null,
  constraint offers_period_not_empty check (not isempty(period)),
  constraint offers_lease_bounds check (min_lease_ms is null or max_lease_ms is null or min_lease_ms <= max_lease_ms),
  -- Several offers per node, never overlapping while in force.
  constraint offers_no_overlap exclude using gist (node_id with =, period with &&) where (withdrawn_at is null)
);
create index offers_node_idx on offers (node_id);
create index offers_project_idx on offers (project_id, created_at, id);

create table leases (
  id            uuid primary key default gen_random_uuid(),
  name          text not null,
  project_id    uuid not null references projects (id),
  created_by    uuid null references users (id),
  start_at      timestamptz not null,
  end_at        timestamptz not null,
  -- pending | active | ending | ended | cancelled | failed (engine progress; access is decided from the times)
  state         text not null,
  -- The request as made (explicit nodes or requirement groups), for display and audit.
  request       jsonb not null,
  created_at    timestamptz not null,
  updated_at    timestamptz not null,
  cancelled_at  timestamptz null,
  constraint leases_window check (end_at > start_at),
  constraint leases_state_known check (state in ('pending', 'active', 'ending', 'ended', 'cancelled', 'failed'))
);
create index leases_project_idx on leases (project_id, start_at, id);
create index leases_window_idx on leases (start_at, end_at);

create table allocations (
  id           uuid primary key default gen_random_uuid(),
  lease_id     uuid not null references leases (id) on delete cascade,
  node_id      text not null references nodes (id),
  group_index  integer not null,
  -- reserved | starting | active | releasing | released | quarantined | cancelled
  state        text not null,
  -- The step an ending allocation is on, so a crash resumes where it stopped.
  step         text null,
  -- The lease window on this node, and that window plus the cleaning gap: two allocations' `blocked` ranges on one
  -- node never overlap. The database enforces it, so it holds with any number of API replicas.
  period       tstzrange not null,
  blocked      tstzrange not null,
  -- false once cancelled: a cancelled allocation no longer holds its node.
  holds        boolean not null default true,
  last_error   text null,
  updated_at   timestamptz not null,
  constraint allocations_state_known check (
    state in ('reserved', 'starting', 'active', 'releasing', 'released', 'quarantined', 'cancelled')
  ),
  constraint allocations_no_double_booking exclude using gist (node_id with =, blocked with &&) where (holds)
);
create index allocations_lease_idx on allocations (lease_id);
create index allocations_node_idx on allocations (node_id, lower(period));

-- Due work for the lease engine, written in the same transaction as the lease change that causes it. Replicas
-- claim due rows with FOR UPDATE SKIP LOCKED; a claim expires (locked_until) so a crashed worker's task is retried.
create table lease_tasks (
  id             uuid primary key default gen_random_uuid(),
  lease_id       uuid not null references leases (id) on delete cascade,
  allocation_id  uuid null references allocations (id) on delete cascade,
  -- start | end
  kind           text not null,
  due_at         timestamptz not null,
  attempts       integer not null default 0,
  last_error     text null,
  locked_by      text null,
  locked_until   timestamptz null,
  done_at        timestamptz null,
  created_at     timestamptz not null,
  constraint lease_tasks_kind_known check (kind in ('start', 'end'))
);
create index lease_tasks_due_idx on lease_tasks (due_at) where done_at is null;
create index lease_tasks_allocation_idx on lease_tasks (allocation_id);

-- The audit log: every lease and offer change, every action on a node, every engine step with its outcome.
create table events (
  seq               bigint generated always as identity primary key,
  at                timestamptz not null,
  type              text not null,
  outcome           text not null default 'ok',
  -- Who: a user, or null for the engine.
  actor_user_id     uuid null,
  actor             text not null,
  node_id           text null,
  lease_id          uuid null,
  offer_id          uuid null,
  -- The projects the event concerns (the lessee, the node's owner), for per-project visibility.
  project_id        uuid null,
  owner_project_id  uuid null,
  message           text not null default '',
  details           jsonb not null default '{}'::jsonb,
  constraint events_outcome_known check (outcome in ('ok', 'error'))
);
create index events_at_idx on events (at, seq);
create index events_node_idx on events (node_id, seq);
create index events_lease_idx on events (lease_id, seq);
create index events_project_idx on events (project_id, seq);
create index events_owner_project_idx on events (owner_project_id, seq);
