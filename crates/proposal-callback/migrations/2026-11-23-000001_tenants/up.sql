-- The tenants whose proposals this service receives results for (dsTenantId in the URL).
CREATE TABLE tenants (
    id          TEXT PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{1,64}$'),
    name        TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
