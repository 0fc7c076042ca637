-- The integrations console's sessions (docs/operations.md, "The integrations console"): the
-- browser holds a random 256-bit id, the table its SHA-256 only, with the admin the pasted
-- token named. A session ends at its sign-out (revoked_at), after PAGE_SESSION_IDLE without a
-- request (last_seen_at), or at expires_at (PAGE_SESSION_MAX after sign-in, never past the
-- token's expiry). Ended sessions are deleted when someone signs in.
CREATE TABLE proposal.console_sessions (
    id_hash bytea PRIMARY KEY CHECK (octet_length(id_hash) = 32),
    tenant_id text NOT NULL,
    subject text NOT NULL,
    role text NOT NULL,
    created_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    revoked_at timestamptz,
    CHECK (created_at <= last_seen_at AND created_at < expires_at)
);

CREATE INDEX console_sessions_expires_at ON proposal.console_sessions (expires_at);
