-- Response times (docs/dispatch-routes.md, "Response times"): every phase of an incident and
-- of each unit timed from the times the writes record, targets per phase and priority, and
-- the hospital's stretcher hold ("retenção de maca") with its alerts.

-- 1. The incident's own times. `call_received_at`: the phone was answered (POST /incident's
--    optional field; the creation time when not given). `submitted_at`: handed to regulation
--    (written by the submit). Rows stored before take the creation time and the submit's
--    time from the append-only history; nothing is guessed beyond that.
ALTER TABLE incidents
    ADD COLUMN call_received_at TIMESTAMPTZ,
    ADD COLUMN submitted_at TIMESTAMPTZ;
UPDATE incidents SET call_received_at = created_at;
UPDATE incidents i SET submitted_at = h.at
  FROM (SELECT incident_id, min(at) AS at FROM incident_history
         WHERE action = 'submitted' GROUP BY incident_id) h
 WHERE h.incident_id = i.id;
ALTER TABLE incidents ALTER COLUMN call_received_at SET NOT NULL;
-- The reports read a range of calls by the time they were received.
CREATE INDEX incidents_call_received ON incidents (call_received_at);

-- 2. A unit's new step: the patient handed to the hospital's team (NEMSIS eTimes.12), the end
--    of the stretcher hold. Optional, like `transporting`.
ALTER TABLE dispatches ADD COLUMN handed_over_at TIMESTAMPTZ;
ALTER TABLE dispatches DROP CONSTRAINT dispatches_status_check;
ALTER TABLE dispatches ADD CONSTRAINT dispatches_status_check CHECK (status IN
    ('assigned', 'en_route', 'on_scene', 'transporting', 'at_destination', 'handed_over',
     'released'));
-- The units at a hospital's door now (the offload board and its alerts).
CREATE INDEX dispatches_at_door ON dispatches (at_destination_at)
    WHERE status = 'at_destination';
-- Today's holds per hospital: the units that arrived at a door since midnight.
CREATE INDEX dispatches_arrived ON dispatches (at_destination_at)
    WHERE at_destination_at IS NOT NULL;

-- 3. Targets per phase and priority (`any`: every priority without a row of its own). A phase
--    without a row for the incident's priority nor `any` has no target. Defaults: published
--    SAMU regulation practice (docs/dispatch-routes.md, "Targets and their sources").
CREATE TABLE response_targets (
    phase       TEXT NOT NULL CHECK (phase IN
                  ('call_taking', 'regulation', 'activation', 'turnout', 'travel', 'response',
                   'on_scene', 'transport', 'hospital_hold', 'return_to_service', 'total')),
    priority    TEXT NOT NULL CHECK (priority IN ('any', 'low', 'medium', 'high', 'critical')),
    seconds     INTEGER NOT NULL CHECK (seconds > 0),
    source      TEXT NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_by  BIGINT REFERENCES users (id),
    PRIMARY KEY (phase, priority)
);
INSERT INTO response_targets (phase, priority, seconds, source) VALUES
    ('call_taking', 'any', 60, 'SAMU regulation practice: call taking within 1 min'),
    ('regulation', 'critical', 60, 'SAMU regulation practice: regulation within 1 min for critical calls'),
    ('regulation', 'any', 180, 'SAMU regulation practice: regulation within 3 min'),
    ('activation', 'any', 20, 'SAMU regulation practice: unit activated within 20 s of the decision'),
    ('turnout', 'critical', 30, 'SAMU regulation practice: turnout 30 s to 60 s (30 s for critical calls)'),
    ('turnout', 'any', 60, 'SAMU regulation practice: turnout 30 s to 60 s'),
    ('response', 'critical', 600, 'SAMU regulation practice: first unit on scene within 10 min (critical)'),
    ('response', 'high', 1800, 'SAMU regulation practice: first unit on scene within 30 min (high)'),
    ('response', 'medium', 1800, 'SAMU regulation practice: first unit on scene within 30 min (medium)'),
    ('response', 'low', 3600, 'SAMU regulation practice: first unit on scene within 60 min (low)'),
    ('hospital_hold', 'any', 1200, 'SAMU practice: stretcher hold alert at 20 min');

-- 4. Hospital hold alerts: a unit at a hospital's door past the `hospital_hold` target. Each
--    replica's offload watcher tries to raise the alert when it falls due; the primary key
--    lets exactly one insert win, and only the winner announces it (NOTIFY dispatch_offload),
--    so every replica's followers hear it once. The unit's hand-over or release clears it.
CREATE TABLE offload_alerts (
    dispatch_id        BIGINT PRIMARY KEY REFERENCES dispatches (id),
    health_unit_id     BIGINT REFERENCES health_units (id),
    at_destination_at  TIMESTAMPTZ NOT NULL,
    target_seconds     INTEGER NOT NULL,
    alerted_at         TIMESTAMPTZ NOT NULL,
    cleared_at         TIMESTAMPTZ,
    cleared_by         TEXT CHECK (cleared_by IN ('handed_over', 'released'))
);
CREATE INDEX offload_alerts_open ON offload_alerts (alerted_at) WHERE cleared_at IS NULL;
