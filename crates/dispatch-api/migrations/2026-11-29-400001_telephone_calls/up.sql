-- The telephone (docs/dispatch-telephony.md): each call the switch announces, kept by its SIP
-- Call-ID. `rang_at` is when the phone rang, `answered_at` when someone picked it up
-- (`answered_by`: the softphone's login or extension as the switch named it; `answered_user_id`
-- when it is a user's login), `ended_at` when it ended: `answered`, or `abandoned` when the
-- caller hung up before anyone answered. `prank_calls` is how many prank calls the number had
-- when it rang (what the call takers were told). `incident_id`: the incident the call became
-- (`POST /incident` with `call_id`), at most one per call and one call per incident.
CREATE TABLE dispatch.calls (
    call_id text PRIMARY KEY CHECK (length(call_id) BETWEEN 1 AND 255),
    caller text,
    called text NOT NULL,
    prank_calls integer NOT NULL DEFAULT 0,
    rang_at timestamptz NOT NULL,
    answered_at timestamptz,
    answered_by text,
    answered_user_id bigint REFERENCES dispatch.users (id),
    ended_at timestamptz,
    outcome text CHECK (outcome IN ('answered', 'abandoned')),
    incident_id bigint UNIQUE REFERENCES dispatch.incidents (id),
    CHECK (answered_at IS NULL OR answered_at >= rang_at),
    CHECK (ended_at IS NULL OR ended_at >= coalesce(answered_at, rang_at)),
    CHECK ((ended_at IS NULL) = (outcome IS NULL)),
    CHECK (outcome IS DISTINCT FROM 'answered' OR answered_at IS NOT NULL),
    CHECK (outcome IS DISTINCT FROM 'abandoned' OR answered_at IS NULL)
);
-- The report reads a range of calls by the time they rang.
CREATE INDEX calls_rang_at ON dispatch.calls (rang_at);

-- The telephone's target (docs/dispatch-routes.md, "Targets and their sources"): NENA's call
-- answering standard, 90 % of calls answered within 15 s.
ALTER TABLE dispatch.response_targets DROP CONSTRAINT response_targets_phase_check;
ALTER TABLE dispatch.response_targets ADD CONSTRAINT response_targets_phase_check CHECK (phase IN
    ('ring_to_answer', 'call_taking', 'regulation', 'activation', 'turnout', 'travel', 'response',
     'on_scene', 'transport', 'hospital_hold', 'return_to_service', 'total'));
INSERT INTO dispatch.response_targets (phase, priority, seconds, source) VALUES
    ('ring_to_answer', 'any', 15,
     'NENA Call Answering Standard (NENA-STA-020.1-2020): 90 % of calls answered within 15 s');
