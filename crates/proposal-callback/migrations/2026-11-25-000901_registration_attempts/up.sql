-- Every RegisterCallback attempt and its outcome, so an operator sees the last one beside the
-- integration (docs/proposal-callback.md, "Registering the callback"): when it was asked for,
-- by whom, and how it ended: `registered`, or the error code (`insurer_rejected`,
-- `insurer_timeout`, `insurer_unreachable`, `insurer_error`, `not_configured`,
-- `registration_superseded`), with the insurer's HTTP status when it answered.
CREATE TABLE registration_attempts (
    id bigserial PRIMARY KEY,
    integration_id bigint NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    started_at timestamptz NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT now(),
    outcome text NOT NULL CHECK (outcome <> ''),
    insurer_status smallint CHECK (insurer_status BETWEEN 100 AND 599),
    detail text,
    admin text NOT NULL
);

-- The latest attempt of each integration.
CREATE INDEX registration_attempts_latest ON registration_attempts (integration_id, id DESC);
