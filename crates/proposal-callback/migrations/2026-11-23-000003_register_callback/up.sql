-- RegisterCallback (issue 6). A token is made *pending* (activated_at NULL) before it is sent
-- to the insurer, and activated, replacing the integration's live token, only in the
-- transaction that records the insurer's 200. Pending and failed tokens never authenticate.
ALTER TABLE tokens ADD COLUMN activated_at TIMESTAMPTZ;
UPDATE tokens SET activated_at = created_at;

-- Live: activated and not revoked. Pending: neither. At most one of each per integration.
DROP INDEX tokens_one_live;
CREATE UNIQUE INDEX tokens_one_live ON tokens (integration_id, token_type)
    WHERE revoked_at IS NULL AND activated_at IS NOT NULL;
CREATE UNIQUE INDEX tokens_one_pending ON tokens (integration_id, token_type)
    WHERE revoked_at IS NULL AND activated_at IS NULL;

-- When the insurer last accepted our callback registration (200).
ALTER TABLE integrations ADD COLUMN callback_registered_at TIMESTAMPTZ;
