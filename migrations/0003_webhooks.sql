-- 0003: webhook outbox. A delivery row is written in the same transaction as the lease event it announces
-- (started, ending soon, ended, failed), so no notification is lost or sent for a change that rolled back.

create table webhook_deliveries (
  id            uuid primary key default gen_random_uuid(),
  event_seq     bigint null,
  type          text not null,
  lease_id      uuid null,
  payload       jsonb not null,
  due_at        timestamptz not null,
  attempts      integer not null default 0,
  last_error    text null,
  locked_until  timestamptz null,
  -- delivered | failed (gave up) | skipped (no webhook configured); null while pending
  outcome       text null,
  finished_at   timestamptz null,
  created_at    timestamptz not null,
  constraint webhook_deliveries_outcome_known check (outcome is null or outcome in ('delivered', 'failed', 'skipped'))
);
create index webhook_deliveries_due_idx on webhook_deliveries (due_at) where outcome is null;

-- When the "ending soon" notice went out; cleared when the end moves, so an extended lease is announced again.
alter table leases add column ending_soon_sent_at timestamptz null;
