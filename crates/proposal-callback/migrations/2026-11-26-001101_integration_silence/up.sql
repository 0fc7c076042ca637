-- Insurers watched for silence (docs/proposal-callback.md, "Silent insurers"): when an
-- integration's current silence passes max(k x the p99 of its usual gap between callbacks at
-- that hour of that weekday, a floor), one row is opened here; it is closed when a callback
-- arrives. One email to the tenant's operator address per opening and one per closing.

-- Where a tenant's operator is told (PATCH /admin/tenant); none: no email, the flag, metric
-- and console banner only.
ALTER TABLE tenants ADD COLUMN operator_email TEXT
    CHECK (operator_email IS NULL OR (operator_email <> '' AND length(operator_email) <= 254));

-- The outbox also carries the operators' emails, which announce no proposal's transition:
-- both references absent, or both present (a proposal's email names its transition).
ALTER TABLE email_outbox ALTER COLUMN proposal_id DROP NOT NULL;
ALTER TABLE email_outbox ALTER COLUMN history_id DROP NOT NULL;
ALTER TABLE email_outbox ADD CONSTRAINT email_outbox_proposal_and_history
    CHECK ((proposal_id IS NULL) = (history_id IS NULL));

CREATE TABLE integration_silences (
    id                  BIGSERIAL PRIMARY KEY,
    integration_id      BIGINT NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    -- When the last callback before the silence arrived: the silence began then.
    since               TIMESTAMPTZ NOT NULL,
    -- When the service saw the silence pass its threshold.
    flagged_at          TIMESTAMPTZ NOT NULL,
    threshold_seconds   DOUBLE PRECISION NOT NULL CHECK (threshold_seconds > 0),
    -- The p99 of the usual gap the threshold came from, and what it was learned from: the
    -- gaps that began at that hour of that weekday (`hour`), or, with too few of those, every
    -- gap of the learning window (`window`).
    usual_gap_seconds   DOUBLE PRECISION NOT NULL CHECK (usual_gap_seconds >= 0),
    learned_from        TEXT NOT NULL CHECK (learned_from IN ('hour', 'window')),
    samples             INT NOT NULL CHECK (samples > 0),
    -- When the first callback after the silence arrived, and when the service saw it.
    ended_at            TIMESTAMPTZ,
    cleared_at          TIMESTAMPTZ,
    -- The operator's emails: one when flagged, one when cleared (none without an address).
    alert_email_id      BIGINT UNIQUE REFERENCES email_outbox (id),
    resume_email_id     BIGINT UNIQUE REFERENCES email_outbox (id),
    CHECK ((ended_at IS NULL) = (cleared_at IS NULL)),
    CHECK (ended_at IS NULL OR ended_at > since),
    CHECK (resume_email_id IS NULL OR cleared_at IS NOT NULL)
);
-- One open silence per integration, and one row per silence (its start), whatever the number
-- of replicas checking: the database decides who flags it and who clears it, so each
-- episode sends one email each way.
CREATE UNIQUE INDEX integration_silences_one_open ON integration_silences (integration_id)
    WHERE cleared_at IS NULL;
CREATE UNIQUE INDEX integration_silences_one_per_start ON integration_silences (integration_id, since);

-- An integration's callbacks by arrival: its last callback, and the gaps it learns from.
CREATE INDEX callback_receipts_integration_received ON callback_receipts (integration_id, received_at);
