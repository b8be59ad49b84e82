-- 0009: what each replica's in-memory planning index (src/leasing/inventory-index.ts) reads again after a change
-- (issue 15). Every write to a node or an offer that planning depends on stamps the row with the writing
-- transaction's id; a replica keeps the oldest transaction still running when it last read
-- (pg_snapshot_xmin(pg_current_snapshot())) and reads only rows stamped at or after it. Every transaction older
-- than that watermark has finished, so no change is ever missed, whatever order transactions commit in, on any
-- number of replicas; a row stamped by a transaction still running is simply read again next time.
-- A per-row stamp rather than one counter row: inventory syncs and the engine's node writes run concurrently and
-- would all queue on a counter's row lock.

alter table nodes add column changed_xid xid8 not null default '0'::xid8;
alter table offers add column changed_xid xid8 not null default '0'::xid8;
create index nodes_changed_xid_idx on nodes (changed_xid);
create index offers_changed_xid_idx on offers (changed_xid);

-- Only what planning reads: a sync that changes nothing but `synced_at`, or the engine recording a power state,
-- does not make every replica read the node again.
create function nodes_stamp_change() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or (new.name, new.owner, new.facts, new.traits, new.maintenance, new.maintenance_reason,
      new.provision_state, new.quarantined_at, new.removed_at)
      is distinct from (old.name, old.owner, old.facts, old.traits, old.maintenance, old.maintenance_reason,
      old.provision_state, old.quarantined_at, old.removed_at) then
    new.changed_xid := pg_current_xact_id();
  end if;
  return new;
end $$;
create trigger nodes_stamp_change before insert or update on nodes
  for each row execute function nodes_stamp_change();

create function offers_stamp_change() returns trigger language plpgsql as $$
begin
  new.changed_xid := pg_current_xact_id();
  return new;
end $$;
create trigger offers_stamp_change before insert or update on offers
  for each row execute function offers_stamp_change();

-- A node's owner is resolved to a project by id or name when it is read: a project created, renamed or deleted
-- changes which project owns the nodes naming it, so those nodes are read again.
create function projects_touch_nodes() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    update nodes set changed_xid = pg_current_xact_id() where owner in (old.id, old.name);
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    update nodes set changed_xid = pg_current_xact_id() where owner in (new.id, new.name);
  end if;
  return null;
end $$;
create trigger projects_touch_nodes after insert or update of id, name or delete on projects
  for each row execute function projects_touch_nodes();

-- The operator's offer list pages by (created_at, id) over every offer: without an index each page sorted them all
-- (a whole list of 50,000 offers took 12.8 s on PGlite, its pages slower the more offers there were).
create index offers_created_idx on offers (created_at, id);

update nodes set changed_xid = pg_current_xact_id();
update offers set changed_xid = pg_current_xact_id();
