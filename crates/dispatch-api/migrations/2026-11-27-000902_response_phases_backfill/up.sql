-- The phases of the incidents stored before `incident_phases` and `unit_phases` existed
-- (previous migration), judged once here in SQL by the rules of `domain::times` (its `judge`
-- and `incident_phases` / `unit_phases`; docs/dispatch-routes.md, "The phases"); from then on
-- the writes keep them. A test runs this file on the demo data and compares every row with
-- what the writes stored (tests/it/times.rs,
-- `the_backfill_judges_every_demo_phase_as_the_writes_do`). At 2,000,000 incidents it takes
-- about a minute (bench/scale/README.md). Rows already there are left as they are.

-- A phase's status from its two ends: `evidence`, a later time was recorded; `needs_start`,
-- an end without a start means the start is missing; `open`, the incident or unit may still
-- record the end. (domain::times::judge; dropped at the end of this file.)
CREATE FUNCTION dispatch.backfill_phase_status(started TIMESTAMPTZ, ended TIMESTAMPTZ,
                                               evidence BOOLEAN, needs_start BOOLEAN,
                                               open BOOLEAN)
    RETURNS TEXT LANGUAGE sql IMMUTABLE
    AS $$
    SELECT CASE WHEN started IS NOT NULL AND ended IS NOT NULL AND ended >= started
                    THEN 'complete'
                WHEN started IS NOT NULL AND ended IS NOT NULL THEN 'out_of_order'
                WHEN started IS NOT NULL AND evidence THEN 'missing'
                WHEN started IS NOT NULL AND open THEN 'running'
                WHEN started IS NOT NULL THEN 'not_reached'
                WHEN ended IS NOT NULL AND needs_start THEN 'missing'
                WHEN open THEN 'pending'
                ELSE 'not_reached'
           END
    $$;
-- The interval in seconds (to the microsecond), only when complete.
CREATE FUNCTION dispatch.backfill_phase_seconds(started TIMESTAMPTZ, ended TIMESTAMPTZ)
    RETURNS DOUBLE PRECISION LANGUAGE sql IMMUTABLE
    AS $$ SELECT CASE WHEN ended >= started THEN extract(epoch FROM ended - started)::float8 END $$;

-- Each unit's phases.
INSERT INTO dispatch.unit_phases (
    dispatch_id, incident_id, call_received_at, priority, mobile_unit_id, health_unit_id,
    turnout_status, turnout_seconds, travel_status, travel_seconds,
    on_scene_status, on_scene_seconds, transport_status, transport_seconds,
    hospital_hold_status, hospital_hold_seconds,
    return_to_service_status, return_to_service_seconds)
SELECT d.id, d.incident_id, i.call_received_at, i.priority, d.mobile_unit_id,
       coalesce(d.destination_id, i.destination_health_unit_id),
       dispatch.backfill_phase_status(d.assigned_at, d.en_route_at,
           num_nonnulls(d.on_scene_at, d.transporting_at, d.at_destination_at,
                        d.handed_over_at) > 0, true, d.released_at IS NULL),
       dispatch.backfill_phase_seconds(d.assigned_at, d.en_route_at),
       dispatch.backfill_phase_status(d.en_route_at, d.on_scene_at,
           num_nonnulls(d.transporting_at, d.at_destination_at, d.handed_over_at) > 0, true,
           d.released_at IS NULL),
       dispatch.backfill_phase_seconds(d.en_route_at, d.on_scene_at),
       dispatch.backfill_phase_status(d.on_scene_at, d.transporting_at,
           num_nonnulls(d.at_destination_at, d.handed_over_at) > 0, true,
           d.released_at IS NULL),
       dispatch.backfill_phase_seconds(d.on_scene_at, d.transporting_at),
       dispatch.backfill_phase_status(d.transporting_at, d.at_destination_at,
           d.handed_over_at IS NOT NULL, true, d.released_at IS NULL),
       dispatch.backfill_phase_seconds(d.transporting_at, d.at_destination_at),
       dispatch.backfill_phase_status(d.at_destination_at, d.handed_over_at,
           d.released_at IS NOT NULL, true, d.released_at IS NULL),
       dispatch.backfill_phase_seconds(d.at_destination_at, d.handed_over_at),
       -- From the hand-over, or from the door when it was not recorded; a unit released
       -- without reaching a door never started it (no start needed).
       dispatch.backfill_phase_status(coalesce(d.handed_over_at, d.at_destination_at),
           d.released_at, false, false, d.released_at IS NULL),
       dispatch.backfill_phase_seconds(coalesce(d.handed_over_at, d.at_destination_at),
           d.released_at)
  FROM dispatch.dispatches d
  JOIN dispatch.incidents i ON i.id = d.incident_id
 ORDER BY i.call_received_at, d.id
    ON CONFLICT DO NOTHING;

-- Each incident's own phases, with what they read of its units (domain::times::UnitMarks):
-- the first assignment, the first unit on scene, the last release once every unit is
-- released and the incident is final, and which dispatch each of those is (ties: the lowest
-- id).
INSERT INTO dispatch.incident_phases (
    incident_id, call_received_at, priority,
    call_taking_status, call_taking_seconds, regulation_status, regulation_seconds,
    activation_status, activation_seconds, activation_dispatch_id,
    response_status, response_seconds, response_dispatch_id,
    total_status, total_seconds, total_dispatch_id)
SELECT i.id, i.call_received_at, i.priority,
       dispatch.backfill_phase_status(i.call_received_at, i.submitted_at,
           i.regulated_at IS NOT NULL OR m.incident_id IS NOT NULL
               OR i.state IN ('awaiting_regulation', 'regulated', 'dispatched', 'closed'),
           true, o.open),
       dispatch.backfill_phase_seconds(i.call_received_at, i.submitted_at),
       dispatch.backfill_phase_status(i.submitted_at, i.regulated_at,
           m.incident_id IS NOT NULL OR i.state IN ('regulated', 'dispatched', 'closed'),
           true, o.open),
       dispatch.backfill_phase_seconds(i.submitted_at, i.regulated_at),
       dispatch.backfill_phase_status(i.regulated_at, m.first_assigned, false, true, o.open),
       dispatch.backfill_phase_seconds(i.regulated_at, m.first_assigned),
       m.first_assigned_id,
       dispatch.backfill_phase_status(i.call_received_at, m.first_on_scene, false, true,
           o.open OR coalesce(m.any_unreleased, false)),
       dispatch.backfill_phase_seconds(i.call_received_at, m.first_on_scene),
       m.first_on_scene_id,
       dispatch.backfill_phase_status(i.call_received_at, o.last_released, false, true,
           o.open OR coalesce(m.any_unreleased, false)),
       dispatch.backfill_phase_seconds(i.call_received_at, o.last_released),
       CASE WHEN o.last_released IS NOT NULL THEN m.last_released_id END
  FROM dispatch.incidents i
  LEFT JOIN (
      SELECT incident_id,
             min(assigned_at) AS first_assigned,
             min(on_scene_at) AS first_on_scene,
             max(released_at) AS last_released,
             bool_or(released_at IS NULL) AS any_unreleased,
             (array_agg(id ORDER BY assigned_at, id))[1] AS first_assigned_id,
             (array_agg(id ORDER BY on_scene_at, id)
                 FILTER (WHERE on_scene_at IS NOT NULL))[1] AS first_on_scene_id,
             (array_agg(id ORDER BY released_at DESC, id)
                 FILTER (WHERE released_at IS NOT NULL))[1] AS last_released_id
        FROM dispatch.dispatches
       GROUP BY incident_id
  ) m ON m.incident_id = i.id
 CROSS JOIN LATERAL (
     SELECT i.state NOT IN ('closed', 'cancelled', 'prank') AS open,
            CASE WHEN m.incident_id IS NOT NULL AND NOT m.any_unreleased
                      AND i.state IN ('closed', 'cancelled', 'prank')
                 THEN m.last_released END AS last_released
 ) o
 ORDER BY i.call_received_at, i.id
    ON CONFLICT DO NOTHING;

DROP FUNCTION dispatch.backfill_phase_seconds(TIMESTAMPTZ, TIMESTAMPTZ);
DROP FUNCTION dispatch.backfill_phase_status(TIMESTAMPTZ, TIMESTAMPTZ, BOOLEAN, BOOLEAN, BOOLEAN);
