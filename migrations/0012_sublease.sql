-- 0012: sub-leasing, one level, as ESI (issue 16, item 6).
--
-- A lessee may offer a node it holds (an allocation of its lease) to another project inside that allocation's
-- window: a sub-offer, which points to the allocation it is carved from. A lease booked from a sub-offer holds a
-- sub-allocation, which points to the same parent allocation. The two levels are two layers of one node's time:
-- the owner's offers and the leases booked from them never overlap each other (as before), and sub-offers and
-- sub-leases never overlap each other, but a sub-lease lies inside its parent allocation by construction, so the
-- exclusion constraints are split by level. The application keeps a sub-allocation inside its parent's window
-- (a sub-offer is bounded by it, and any cut of the parent cuts its sub-leases in the same transaction).

alter table offers add column parent_allocation_id uuid null references allocations (id);
alter table allocations add column parent_allocation_id uuid null references allocations (id);
create index offers_parent_allocation_idx on offers (parent_allocation_id) where parent_allocation_id is not null;
create index allocations_parent_allocation_idx on allocations (parent_allocation_id) where parent_allocation_id is not null;

alter table offers drop constraint offers_no_overlap;
alter table offers add constraint offers_no_overlap
  exclude using gist (node_id with =, period with &&) where (withdrawn_at is null and parent_allocation_id is null);
alter table offers add constraint offers_sub_no_overlap
  exclude using gist (node_id with =, period with &&) where (withdrawn_at is null and parent_allocation_id is not null);

alter table allocations drop constraint allocations_no_double_booking;
alter table allocations add constraint allocations_no_double_booking
  exclude using gist (node_id with =, blocked with &&) where (holds and parent_allocation_id is null);
alter table allocations add constraint allocations_sub_no_double_booking
  exclude using gist (node_id with =, blocked with &&) where (holds and parent_allocation_id is not null);

-- A sub-allocation cut because its parent allocation ended or left its lease.
alter table allocations drop constraint allocations_leave_reason_known;
alter table allocations add constraint allocations_leave_reason_known
  check (leave_reason is null or leave_reason in ('returned', 'replaced', 'reclaimed', 'failed', 'parent_ended'));
