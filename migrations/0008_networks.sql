-- 0008: tenant networks on leased nodes (issue 14).
--
-- One row per network attachment Leasehold makes (REST, CLI, web UI) or lets through its gateway (Ironic's `vifs`):
-- the Neutron port plugged into a NIC of a node as an Ironic VIF, whose project's port it is, the lease it was
-- made under, and whether Leasehold created the port (then it deletes it when the attachment ends) — a trunk with
-- its tagged subports likewise. The row is written before anything is asked of Neutron or Ironic and advanced after
-- each step (`attaching` → `attached` → `detaching` → `detached`, or `failed` with nothing left behind), so a crash
-- at any point leaves a row that says what to undo. Ironic stays the truth about what is plugged where: the engine
-- and the reconciler read the node's VIFs there and use these rows to know what Leasehold created.

create table network_attachments (
  id              uuid primary key default gen_random_uuid(),
  node_id         text not null references nodes (id),
  -- The project whose port it is (the caller's): what decides who may see it and when it must go.
  project_id      text not null,
  -- The lease the caller held the node under when it attached (null: the owner's or the operator's own attachment).
  lease_id        uuid null references leases (id),
  network_id      text not null,
  network_name    text not null,
  segmentation_id integer null,
  -- The Neutron port (the VIF); null until it exists.
  port_id         text null,
  -- Leasehold made the port: it deletes it when the attachment ends.
  port_created    boolean not null default false,
  nic_id          text null,
  mac             text null,
  trunk_id        text null,
  trunk_created   boolean not null default false,
  -- Tagged networks on the trunk: [{network_id, network_name, segmentation_id, port_id, port_created}].
  tagged          jsonb not null default '[]'::jsonb,
  state           text not null,
  created_by      text null,
  created_at      timestamptz not null,
  updated_at      timestamptz not null,
  ended_at        timestamptz null,
  last_error      text null,
  constraint network_attachments_state check (state in ('attaching', 'attached', 'detaching', 'detached', 'failed')),
  constraint network_attachments_tagged_is_array check (jsonb_typeof(tagged) = 'array')
);

-- What is on a node now (the hot read of GET /v1/nodes/{id}/networks and of the release step).
create index network_attachments_live_idx on network_attachments (node_id) where state in ('attaching', 'attached', 'detaching');
-- A port is plugged in one place at a time.
create unique index network_attachments_port_idx on network_attachments (port_id) where state in ('attaching', 'attached', 'detaching');
create index network_attachments_lease_idx on network_attachments (lease_id) where lease_id is not null;
