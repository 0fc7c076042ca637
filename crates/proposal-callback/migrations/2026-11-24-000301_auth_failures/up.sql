-- Failed `POST /callback/auth` attempts per client (docs/proposal-callback.md,
-- "Authentication"): one row per client key, shared by every replica. A fixed window: the
-- first failure starts it, each failure within it adds one, and a client with
-- `failures >= limit` is refused until `window_start + window`. A success changes nothing.
CREATE TABLE auth_failures (
    -- The client's address as the service sees it (IPv4, or the /64 of an IPv6 address).
    client        TEXT PRIMARY KEY,
    window_start  TIMESTAMPTZ NOT NULL,
    failures      INT NOT NULL CHECK (failures > 0)
);
-- Pruning deletes the rows whose window ended.
CREATE INDEX auth_failures_window_start ON auth_failures (window_start);
