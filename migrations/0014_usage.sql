-- 0014: usage accounting (issue 17).
--
-- What a lessee actually had, per allocation: access (decided from the lease table at each request, see
-- store/queries/node-view-query.ts `handedOver`) begins at the later of the allocation's start and the instant its
-- node stopped being held back by an earlier allocation (released, or un-quarantined after a failed cleaning), and
-- ends at the allocation's end as it stands (cut by an early end, a return, a replacement, a reclaim; moved by an
-- extension). Neither instant depends on Ironic or the engine's marks, so an outage does not distort usage.
--
-- 1. `allocations.freed_at`: the instant an allocation stopped holding its node back from the next lessee. Stamped
--    from the row's own `updated_at` (the injectable clock's time of the write; the database's now() is never used)
--    by a trigger when it becomes `released` or `cancelled`, whatever code path writes that; for `quarantined`, by
--    the store when the node's quarantine is cleared (until then the next lessee has no access).
-- 2. `usage_records`: one per allocation, written with it (a trigger, in the same transaction as the booking or the
--    replacement), with what the node was at that time: its name, owner project, resource class and facts, and the
--    price of the offer in force at the allocation's start (the price agreed at booking holds for the allocation).

alter table allocations add column freed_at timestamptz null;
-- Earlier history: the last write of a finished allocation is the best instant known.
update allocations set freed_at = updated_at where state in ('released', 'cancelled');
update allocations a set freed_at = a.updated_at
  where a.state = 'quarantined' and not exists (select 1 from nodes n where n.id = a.node_id and n.quarantined_at is not null);

create function allocations_stamp_freed() returns trigger language plpgsql as $$
begin
  if new.state in ('released', 'cancelled') and new.state is distinct from old.state and new.freed_at is null then
    new.freed_at := new.updated_at;
  end if;
  return new;
end $$;
create trigger allocations_stamp_freed before update of state on allocations
  for each row execute function allocations_stamp_freed();

-- An owner's price per node-hour (ISO 4217 currency), both or neither.
alter table offers add column price_per_node_hour numeric(14, 4) null;
alter table offers add column currency text null;
alter table offers add constraint offers_price_with_currency check ((price_per_node_hour is null) = (currency is null));
alter table offers add constraint offers_price_not_negative check (price_per_node_hour is null or price_per_node_hour >= 0);
alter table offers add constraint offers_currency_code check (currency is null or currency ~ '^[A-Z]{3}$');

create table usage_records (
  allocation_id        uuid primary key references allocations (id) on delete cascade,
  lease_id             uuid not null,
  node_id              text not null,
  node_name            text null,
  lessee_project_id    text not null,
  -- The node's owner resolved to a project (by id, then name) when the allocation was written; null: unowned.
  owner_project_id     text null,
  resource_class       text null,
  facts                jsonb not null default '{}'::jsonb,
  offer_id             uuid null,
  price_per_node_hour  numeric(14, 4) null,
  currency             text null,
  recorded_at          timestamptz not null
);
create index usage_records_lessee_idx on usage_records (lessee_project_id);
create index usage_records_owner_idx on usage_records (owner_project_id);

create function allocations_record_usage() returns trigger language plpgsql as $$
begin
  insert into usage_records (allocation_id, lease_id, node_id, node_name, lessee_project_id, owner_project_id,
                             resource_class, facts, offer_id, price_per_node_hour, currency, recorded_at)
  select new.id, new.lease_id, n.id, n.name, l.project_id,
         (select p.id from projects p where p.id = n.owner or p.name = n.owner order by p.id = n.owner desc limit 1),
         n.resource_class, n.facts, o.id, o.price_per_node_hour, o.currency, new.updated_at
    from nodes n
    join leases l on l.id = new.lease_id
    left join lateral (select id, price_per_node_hour, currency from offers
                        where node_id = n.id and withdrawn_at is null and period @> lower(new.period)
                        limit 1) o on true
   where n.id = new.node_id;
  return new;
end $$;
create trigger allocations_record_usage after insert on allocations
  for each row execute function allocations_record_usage();

insert into usage_records (allocation_id, lease_id, node_id, node_name, lessee_project_id, owner_project_id,
                           resource_class, facts, recorded_at)
select a.id, a.lease_id, n.id, n.name, l.project_id,
       (select p.id from projects p where p.id = n.owner or p.name = n.owner order by p.id = n.owner desc limit 1),
       n.resource_class, n.facts, a.updated_at
  from allocations a join nodes n on n.id = a.node_id join leases l on l.id = a.lease_id;
