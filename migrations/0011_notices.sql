-- 0011: notices before a lease's end, and how a lessee may extend a lease (issue 16, items 3 and 4).
--
-- A notice is sent once per lease, offset and end: the row is written in the same transaction as the
-- `lease.ending_soon` event (and its webhook), under this primary key, so two engines or a restart never send it
-- twice. The end is part of the key: a lease whose end moves has new notices to send (changing the end also drops
-- the rows of other ends, so moving it back and forth re-arms them too).
create table lease_notices (
  lease_id uuid not null references leases (id) on delete cascade,
  offset_ms bigint not null check (offset_ms > 0),
  end_at timestamptz not null,
  sent_at timestamptz not null,
  -- Several offsets falling due at once (a short lease, an engine that was down) are announced by one event, for
  -- the nearest one; the others are recorded as covered by it.
  announced boolean not null default true,
  primary key (lease_id, offset_ms, end_at)
);

-- A project's own notice offsets (ms before the end, a JSON array); null: the operator's default
-- (LEASEHOLD_NOTICE_OFFSETS).
alter table projects add column notice_offsets_ms jsonb null;

-- An offer's extension policy. `extension_window_ms`: the lessee may extend only when now >= end - window.
-- `extension_max_ahead_ms`: an extension reaches at most now + this. `max_total_ms`: the whole lease (start to end)
-- never exceeds this; with it, `max_lease_ms` bounds the lease as booked and this bounds it after extensions.
alter table offers add column extension_window_ms bigint null check (extension_window_ms is null or extension_window_ms > 0);
alter table offers add column extension_max_ahead_ms bigint null check (extension_max_ahead_ms is null or extension_max_ahead_ms > 0);
alter table offers add column max_total_ms bigint null check (max_total_ms is null or max_total_ms > 0);

-- Auto-renew: the engine extends the lease by `step` while it may, up to `until`. `state` is `on` until it
-- reached `until` (`done`) or a rule refused a step (`stopped`, with the rule and the message told to the lessee).
alter table leases add column auto_renew_step_ms bigint null check (auto_renew_step_ms is null or auto_renew_step_ms > 0);
alter table leases add column auto_renew_until timestamptz null;
alter table leases add column auto_renew_state text null check (auto_renew_state is null or auto_renew_state in ('on', 'done', 'stopped'));
alter table leases add column auto_renew_rule text null;
alter table leases add column auto_renew_message text null;
create index leases_auto_renew_idx on leases (end_at) where auto_renew_state = 'on';
