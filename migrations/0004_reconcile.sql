-- 0004: reconciliation (Leasehold's store against Ironic).

-- Since when the reconciler has seen an allocation's node in maintenance (null: not in maintenance), so entering
-- and leaving maintenance are each announced once, across restarts and replicas.
alter table allocations add column node_maintenance_at timestamptz null;

-- Work one replica does at a time (the reconciler): the holder keeps it by renewing `until`; once `until` has
-- passed (the holder died) another replica takes it over.
create table leader_leases (
  name    text primary key,
  holder  text not null,
  until   timestamptz not null
);
