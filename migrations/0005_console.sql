-- 0005: serial console tokens. A token lets whoever holds it open WebSocket connections to one node's serial
-- console for a short time. Only its SHA-256 hash is stored, like API tokens. The token never grants access by
-- itself: access is decided again from the lease table when a connection opens and every second while it is open.

create table console_tokens (
  id          uuid primary key default gen_random_uuid(),
  node_id     text not null references nodes (id),
  -- Whose rights the token carries; those rights are re-read (role, project) at every check.
  user_id     uuid not null references users (id) on delete cascade,
  token_hash  text not null,
  created_at  timestamptz not null,
  expires_at  timestamptz not null,
  revoked_at  timestamptz null,
  constraint console_tokens_token_hash_key unique (token_hash),
  constraint console_tokens_expire_after_creation check (expires_at > created_at)
);

create index console_tokens_node_id_idx on console_tokens (node_id, created_at);
create index console_tokens_user_id_idx on console_tokens (user_id);
