-- One integration per tenant, insurer and environment. `is_callback_active` is set by
-- RegisterCallback (issue 6) once the insurer accepted our callback URL.
CREATE TABLE integrations (
    id                  BIGSERIAL PRIMARY KEY,
    tenant_id           TEXT NOT NULL REFERENCES tenants (id),
    insurer             TEXT NOT NULL CHECK (insurer IN ('porto', 'tokio', 'too')),
    environment         TEXT NOT NULL DEFAULT 'homologation'
                        CHECK (environment IN ('homologation', 'production')),
    is_callback_active  BOOLEAN NOT NULL DEFAULT false,
    created_at          TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, insurer, environment)
);

-- The Token collection. Only the SHA-256 of a token is kept; the token itself is shown once.
CREATE TABLE tokens (
    id              BIGSERIAL PRIMARY KEY,
    integration_id  BIGINT NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    token_type      TEXT NOT NULL CHECK (token_type IN ('registerCallback')),
    token_hash      BYTEA NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    revoked_at      TIMESTAMPTZ
);
-- Rotation revokes the old token first, so an integration has at most one live token per type.
CREATE UNIQUE INDEX tokens_one_live ON tokens (integration_id, token_type) WHERE revoked_at IS NULL;

CREATE TABLE proposals (
    id             BIGSERIAL PRIMARY KEY,
    tenant_id      TEXT NOT NULL REFERENCES tenants (id),
    proposal_id    TEXT NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('under_analysis', 'pending', 'approved', 'refused')),
    contact_email  TEXT NOT NULL,
    in_queue       BOOLEAN NOT NULL DEFAULT true,
    created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, proposal_id)
);

-- Every request that reached the parsing stage, stored before it was parsed.
CREATE TABLE callback_receipts (
    id              BIGSERIAL PRIMARY KEY,
    tenant_id       TEXT NOT NULL REFERENCES tenants (id),
    insurer         TEXT NOT NULL,
    integration_id  BIGINT,
    received_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    headers         JSONB NOT NULL DEFAULT '{}',
    body            BYTEA NOT NULL,
    body_sha256     BYTEA NOT NULL,
    -- received: stored, outcome not recorded yet (the process or the database went away).
    status          TEXT NOT NULL DEFAULT 'received'
                    CHECK (status IN ('received', 'processed', 'duplicate', 'unchanged', 'failed')),
    http_status     SMALLINT,
    error_code      TEXT,
    error_detail    TEXT,
    proposal_id     TEXT,
    dedup_key       TEXT,
    attempts        INT NOT NULL DEFAULT 0,
    processed_at    TIMESTAMPTZ
);
CREATE INDEX callback_receipts_tenant_status ON callback_receipts (tenant_id, status, id);
CREATE INDEX callback_receipts_received_at ON callback_receipts (received_at);

-- Exactly once: a callback's effect is applied in the transaction that inserts its key here.
-- The key is the insurer's event id, or the SHA-256 of the body when the insurer sends none.
CREATE TABLE applied_callbacks (
    tenant_id    TEXT NOT NULL,
    insurer      TEXT NOT NULL,
    dedup_key    TEXT NOT NULL,
    proposal_id  BIGINT NOT NULL REFERENCES proposals (id),
    receipt_id   BIGINT REFERENCES callback_receipts (id) ON DELETE SET NULL,
    status       TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, insurer, dedup_key)
);

CREATE TABLE integration_history (
    id                BIGSERIAL PRIMARY KEY,
    proposal_id       BIGINT NOT NULL REFERENCES proposals (id),
    insurer           TEXT NOT NULL,
    receipt_id        BIGINT REFERENCES callback_receipts (id) ON DELETE SET NULL,
    from_status       TEXT NOT NULL,
    to_status         TEXT NOT NULL,
    insurer_event_id  TEXT,
    insurer_note      TEXT,
    insurer_time      TIMESTAMPTZ,
    created_at        TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX integration_history_proposal ON integration_history (proposal_id, id);

CREATE TABLE proposal_events (
    id           BIGSERIAL PRIMARY KEY,
    proposal_id  BIGINT NOT NULL REFERENCES proposals (id),
    kind         TEXT NOT NULL
                 CHECK (kind IN ('callback_received', 'status_changed', 'left_queue', 'email_queued')),
    receipt_id   BIGINT REFERENCES callback_receipts (id) ON DELETE SET NULL,
    data         JSONB NOT NULL DEFAULT '{}',
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX proposal_events_proposal ON proposal_events (proposal_id, id);

-- One email per accepted transition (UNIQUE history_id), sent by the worker.
CREATE TABLE email_outbox (
    id               BIGSERIAL PRIMARY KEY,
    proposal_id      BIGINT NOT NULL REFERENCES proposals (id),
    history_id       BIGINT NOT NULL UNIQUE REFERENCES integration_history (id),
    recipient        TEXT NOT NULL,
    subject          TEXT NOT NULL,
    body             TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent')),
    attempts         INT NOT NULL DEFAULT 0,
    next_attempt_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    last_error       TEXT,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    sent_at          TIMESTAMPTZ
);
CREATE INDEX email_outbox_due ON email_outbox (next_attempt_at, id) WHERE status = 'queued';
