-- 0007: Keystone as an identity backend (issue 13).
--
-- Project ids become text: under LEASEHOLD_IDENTITY=keystone a project's id is its Keystone project id (32 hex
-- digits by default, or whatever an operator chose), which Ironic's `owner` and `lessee` hold as they are, so
-- Ironic's own owner/lessee policy and Leasehold agree. Local projects keep their uuids, written as text.
-- Users stay Leasehold's own (local identity): a Keystone user has no row, so what it creates records no
-- `created_by` (the audit log names it), and a console token it opens keeps the identity it was issued to.

alter table users drop constraint users_project_id_fkey;
alter table offers drop constraint offers_project_id_fkey;
alter table leases drop constraint leases_project_id_fkey;

alter table projects alter column id drop default;
alter table projects alter column id type text using id::text;
alter table projects alter column id set default gen_random_uuid()::text;
alter table projects add constraint projects_id_not_empty check (id <> '');

alter table users alter column project_id type text using project_id::text;
alter table offers alter column project_id type text using project_id::text;
alter table offers alter column allowed_projects type text[] using allowed_projects::text[];
alter table leases alter column project_id type text using project_id::text;
alter table events alter column project_id type text using project_id::text;
alter table events alter column owner_project_id type text using owner_project_id::text;

alter table users add constraint users_project_id_fkey foreign key (project_id) references projects (id);
alter table offers add constraint offers_project_id_fkey foreign key (project_id) references projects (id);
alter table leases add constraint leases_project_id_fkey foreign key (project_id) references projects (id);

-- A Keystone user's console token: no users row; who it was issued to (user id and name, project, role), which
-- its connections are re-checked as (lease, node, policy) for as long as the token lasts.
alter table console_tokens alter column user_id drop not null;
alter table console_tokens add column principal jsonb null;
alter table console_tokens add constraint console_tokens_one_holder
  check ((user_id is null) <> (principal is null));
