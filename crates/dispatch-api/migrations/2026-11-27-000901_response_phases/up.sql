-- The phases the reports read (docs/dispatch-routes.md, "Response times", "How the report is
-- kept"): every incident's and every unit's phases as `domain::times` judges them, written
-- by the writes themselves, in the transaction of each write that changes an incident
-- (`store::phases::refresh`). A report then aggregates phases already judged, read along the
-- time the call was received, instead of judging a month of incidents and their units on
-- every request. Only each phase's status and seconds are kept: targets are applied when a
-- report is read, so a target ADMIN changes applies to every report after it.

-- One row per incident: its own phases (domain::times::Phase::OF_INCIDENT). `*_dispatch_id`
-- names the unit whose time ended the phase (the first assigned for `activation`, the first
-- on scene for `response`, the last released for `total`), which a report grouped by
-- vehicle type, base or hospital files the phase under.
CREATE TABLE dispatch.incident_phases (
    incident_id             BIGINT PRIMARY KEY REFERENCES dispatch.incidents (id),
    call_received_at        TIMESTAMPTZ NOT NULL,
    priority                TEXT,
    call_taking_status      TEXT NOT NULL,
    call_taking_seconds     DOUBLE PRECISION,
    regulation_status       TEXT NOT NULL,
    regulation_seconds      DOUBLE PRECISION,
    activation_status       TEXT NOT NULL,
    activation_seconds      DOUBLE PRECISION,
    activation_dispatch_id  BIGINT,
    response_status         TEXT NOT NULL,
    response_seconds        DOUBLE PRECISION,
    response_dispatch_id    BIGINT,
    total_status            TEXT NOT NULL,
    total_seconds           DOUBLE PRECISION,
    total_dispatch_id       BIGINT,
    CONSTRAINT incident_phases_status CHECK (
        ARRAY[call_taking_status, regulation_status, activation_status, response_status,
              total_status]
        <@ ARRAY['complete', 'running', 'pending', 'not_reached', 'missing', 'out_of_order']),
    -- Seconds exactly when the phase is complete.
    CONSTRAINT incident_phases_seconds CHECK (
        (call_taking_seconds IS NOT NULL) = (call_taking_status = 'complete')
        AND (regulation_seconds IS NOT NULL) = (regulation_status = 'complete')
        AND (activation_seconds IS NOT NULL) = (activation_status = 'complete')
        AND (response_seconds IS NOT NULL) = (response_status = 'complete')
        AND (total_seconds IS NOT NULL) = (total_status = 'complete'))
-- Room on each page for the row's next versions (most writes change it): HOT updates.
) WITH (fillfactor = 80);
CREATE INDEX incident_phases_received ON dispatch.incident_phases (call_received_at);

-- One row per dispatch: the unit's phases (domain::times::Phase::OF_UNIT), with the unit and
-- where it takes the patient (the dispatch's own destination, else the incident's), and the
-- incident's call time and priority, so a report reads no other table for them.
CREATE TABLE dispatch.unit_phases (
    dispatch_id                BIGINT PRIMARY KEY REFERENCES dispatch.dispatches (id),
    incident_id                BIGINT NOT NULL REFERENCES dispatch.incidents (id),
    call_received_at           TIMESTAMPTZ NOT NULL,
    priority                   TEXT,
    mobile_unit_id             BIGINT NOT NULL,
    health_unit_id             BIGINT,
    turnout_status             TEXT NOT NULL,
    turnout_seconds            DOUBLE PRECISION,
    travel_status              TEXT NOT NULL,
    travel_seconds             DOUBLE PRECISION,
    on_scene_status            TEXT NOT NULL,
    on_scene_seconds           DOUBLE PRECISION,
    transport_status           TEXT NOT NULL,
    transport_seconds          DOUBLE PRECISION,
    hospital_hold_status       TEXT NOT NULL,
    hospital_hold_seconds      DOUBLE PRECISION,
    return_to_service_status   TEXT NOT NULL,
    return_to_service_seconds  DOUBLE PRECISION,
    CONSTRAINT unit_phases_status CHECK (
        ARRAY[turnout_status, travel_status, on_scene_status, transport_status,
              hospital_hold_status, return_to_service_status]
        <@ ARRAY['complete', 'running', 'pending', 'not_reached', 'missing', 'out_of_order']),
    CONSTRAINT unit_phases_seconds CHECK (
        (turnout_seconds IS NOT NULL) = (turnout_status = 'complete')
        AND (travel_seconds IS NOT NULL) = (travel_status = 'complete')
        AND (on_scene_seconds IS NOT NULL) = (on_scene_status = 'complete')
        AND (transport_seconds IS NOT NULL) = (transport_status = 'complete')
        AND (hospital_hold_seconds IS NOT NULL) = (hospital_hold_status = 'complete')
        AND (return_to_service_seconds IS NOT NULL) = (return_to_service_status = 'complete'))
) WITH (fillfactor = 80);
CREATE INDEX unit_phases_received ON dispatch.unit_phases (call_received_at);
