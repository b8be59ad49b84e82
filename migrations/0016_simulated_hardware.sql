-- 0016: the simulated driver's hardware lives in the store (issue 17), so the demo keeps its machines' state across
-- a restart (no "drift repaired" after it) and several replicas on one PostgreSQL drive one simulated hardware.
-- One row per simulated node: what changes on the machine (power, provision state, marks, maintenance, boot
-- device, VIFs, and the operation in progress with the instant its stage ends) as one JSON document, a version
-- for conditional writes (two replicas acting on one node: one wins, the other is told the node is busy), and the
-- writing transaction's id so each replica reads only what changed since its last look (the same watermark as
-- migration 0009's planning index: no change is missed whatever order writers commit in).
create table simulated_nodes (
  uuid text primary key,
  name text not null,
  state jsonb not null,
  version bigint not null default 1,
  changed_xid xid8 not null default pg_current_xact_id(),
  updated_at timestamptz not null
);
create index simulated_nodes_changed_xid_idx on simulated_nodes (changed_xid);

create function simulated_nodes_stamp_change() returns trigger language plpgsql as $$
begin
  new.changed_xid := pg_current_xact_id();
  return new;
end $$;
create trigger simulated_nodes_stamp_change before insert or update on simulated_nodes
  for each row execute function simulated_nodes_stamp_change();
