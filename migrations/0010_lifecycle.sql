-- 0010: leases that survive a failed node, a partial return and an owner's reclaim (issue 16).
--
-- An allocation may leave its lease before the lease ends: replaced by another node (its node failed, the lessee
-- asked, the owner reclaimed it), returned early by the lessee, or dropped when no substitute was found. Its window
-- is cut at the instant it leaves (`period`'s upper bound: access ends there, as at any end) and the instant and
-- the reason are kept; the allocation that took its place points back to it. Leasehold derives a lease's state
-- from the allocations still in it, so one node leaving does not make the lease "ending".

alter table leases add column replace_policy text not null default 'auto';
alter table leases add constraint leases_replace_policy_known check (replace_policy in ('auto', 'ask', 'never'));

alter table allocations add column leave_reason text null;
alter table allocations add column left_at timestamptz null;
-- The allocation this one took the place of (a replacement), or null.
alter table allocations add column replaces uuid null references allocations (id);
-- A failure of the node recorded on the allocation (the lease stays on it: replace `ask`/`never`, or no
-- substitute), once per failure kind, so the lessee is told once, not every reconcile pass.
alter table allocations add column failure text null;
alter table allocations add column failure_kind text null;
alter table allocations add constraint allocations_leave_reason_known
  check (leave_reason is null or leave_reason in ('returned', 'replaced', 'reclaimed', 'failed'));
create index allocations_replaces_idx on allocations (replaces) where replaces is not null;

-- An owner may take a node back before a lease on it ends only when its offer said so, with this much notice.
alter table offers add column reclaim_notice_ms bigint null;
alter table offers add constraint offers_reclaim_notice_positive check (reclaim_notice_ms is null or reclaim_notice_ms >= 0);
