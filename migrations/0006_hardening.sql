-- 0006: issue 11 (hardening).

-- The lease engine's heartbeat renews every claim of one worker every ~1.7 s (src/engine/lease-engine.ts): find
-- them by worker without scanning every unfinished task (100,000 pending leases hold 200,000 of those).
create index lease_tasks_claims_idx on lease_tasks (locked_by) where done_at is null and locked_by is not null;

-- A token's listed prefix no longer shows part of a secret an operator chose (src/domain/tokens.ts): the
-- bootstrap admin token (its value may have come from LEASEHOLD_ADMIN_TOKEN) is listed by a fingerprint of its
-- hash, and issued tokens by `lh_` and 4 characters, as new ones are.
update api_tokens set prefix = 'sha256:' || left(token_hash, 8) where description = 'bootstrap admin token';
update api_tokens set prefix = left(prefix, 7) where prefix like 'lh\_%' escape '\' and length(prefix) > 7;
