-- 0017: what each replica's copy of the leases in force (src/leasing/leases-in-force.ts) reads again after a change
-- (issue 15: the node list looked up the lease in force node by node on every page, ≈ 5 ms of a 1,000-node page on
-- PostgreSQL and ≈ 8 of 9.5 ms on PGlite). The same watermark scheme as migration 0009: every write that could
-- change which lease grants access to a node, or what the node list shows of it, stamps the row with the writing
-- transaction's id, and a replica reads again only what was stamped at or after the oldest transaction still
-- running when it last looked. Allocations are never deleted, and a project with leases cannot be (the leases'
-- foreign key), so a stamp on the row is always there to be found.

alter table allocations add column changed_xid xid8 not null default '0'::xid8;
alter table leases add column changed_xid xid8 not null default '0'::xid8;
alter table projects add column changed_xid xid8 not null default '0'::xid8;
create index allocations_changed_xid_idx on allocations (changed_xid);
create index leases_changed_xid_idx on leases (changed_xid);
create index projects_changed_xid_idx on projects (changed_xid);

-- An allocation decides access through its node, window, whether it holds, its state (an unfinished earlier
-- allocation keeps the next lessee out; an unfinished sub-lease keeps its lender out) and its parent; the windows
-- held on a node (src/leasing/holds-copy.ts, the offer list's free windows) through its blocked window too. The
-- engine's other writes (step, errors, timestamps) leave the stamp alone.
create function allocations_stamp_change() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or (new.node_id, new.lease_id, new.period, new.blocked, new.holds, new.state, new.parent_allocation_id)
      is distinct from (old.node_id, old.lease_id, old.period, old.blocked, old.holds, old.state, old.parent_allocation_id) then
    new.changed_xid := pg_current_xact_id();
  end if;
  return new;
end $$;
create trigger allocations_stamp_change before insert or update on allocations
  for each row execute function allocations_stamp_change();

-- A lease: its state (cancelled and failed leases grant nothing), its end (shown), its project (who has access).
create function leases_stamp_change() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or (new.state, new.end_at, new.project_id) is distinct from (old.state, old.end_at, old.project_id) then
    new.changed_xid := pg_current_xact_id();
  end if;
  return new;
end $$;
create trigger leases_stamp_change before insert or update on leases
  for each row execute function leases_stamp_change();

-- A project: its name is what the node list shows as the lessee.
create function projects_stamp_change() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or new.name is distinct from old.name or new.id is distinct from old.id then
    new.changed_xid := pg_current_xact_id();
  end if;
  return new;
end $$;
create trigger projects_stamp_change before insert or update on projects
  for each row execute function projects_stamp_change();
