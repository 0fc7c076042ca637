-- The manager page's sessions (docs/dispatch-routes.md, "The manager's page"): the browser
-- holds a random 256-bit id, the table its SHA-256 only. A session ends at its sign-out
-- (revoked_at), after PAGE_SESSION_IDLE without a request (last_seen_at), at expires_at
-- (PAGE_SESSION_MAX after sign-in, never past the pasted token's expiry), or when its user is
-- no longer active. Ended sessions are deleted when someone signs in.
CREATE TABLE dispatch.page_sessions (
    id_hash bytea PRIMARY KEY CHECK (octet_length(id_hash) = 32),
    user_id bigint NOT NULL REFERENCES dispatch.users (id) ON DELETE CASCADE,
    -- The user's profile at sign-in (each request checks the current one).
    profile text NOT NULL,
    created_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz,
    CHECK (created_at <= last_seen_at AND created_at < expires_at)
);

CREATE INDEX page_sessions_user ON dispatch.page_sessions (user_id);
CREATE INDEX page_sessions_expires_at ON dispatch.page_sessions (expires_at);
