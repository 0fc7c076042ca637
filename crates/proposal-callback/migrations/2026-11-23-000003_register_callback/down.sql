ALTER TABLE integrations DROP COLUMN callback_registered_at;
DROP INDEX tokens_one_pending;
DROP INDEX tokens_one_live;
-- Tokens that were never activated could not authenticate: they go, so none becomes live.
DELETE FROM tokens WHERE activated_at IS NULL;
ALTER TABLE tokens DROP COLUMN activated_at;
CREATE UNIQUE INDEX tokens_one_live ON tokens (integration_id, token_type) WHERE revoked_at IS NULL;
