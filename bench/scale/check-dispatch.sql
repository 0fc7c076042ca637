-- Invariants of dispatch-api's data that the generated data must keep. The file prints one
-- row per broken invariant (its name, how many rows break it, an example id and detail), so
-- nothing when all hold. No LIMIT in the checks: with one the planner may pick a nested loop
-- hoping to stop early, and when no row breaks the invariant it never does. Run at the end
-- of bench/scale/build-dispatch.sh:
--
--   psql -X -At -f bench/scale/check-dispatch.sql "$DATABASE_URL"
\set ON_ERROR_STOP on
SET search_path TO dispatch, public;
SET TIME ZONE 'UTC';
SET work_mem = '256MB';

-- States: `closed_at` and a conclusion exactly on closed incidents (docs/dispatch-routes.md:
-- only `close` sets them; a cancelled or prank incident's end is its last history entry).
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'closed_at only on closed', id, state FROM incidents
  WHERE (state = 'closed') <> (closed_at IS NOT NULL)) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'conclusion only on closed', id, state FROM incidents
  WHERE (state = 'closed') <> (conclusion IS NOT NULL)) v(c, id, x) GROUP BY c;
-- Only the newest incidents are open: among the newest 1,000 and, at the rate of a large
-- centre (1,000,000 incidents or more), in the last 6 hours before the newest.
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (WITH newest AS (
    SELECT min(created_at) AS since FROM (
        SELECT created_at FROM incidents ORDER BY created_at DESC LIMIT 1000) n
    UNION ALL
    SELECT max(created_at) - interval '6 hours' FROM incidents
     WHERE (SELECT count(*) FROM incidents) >= 1000000)
 SELECT 'open only among the newest', id, created_at::text FROM incidents
  WHERE state NOT IN ('closed', 'cancelled', 'prank')
    AND created_at < (SELECT max(since) FROM newest)) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'times in order', id, created_at::text FROM incidents
  WHERE updated_at < created_at OR regulated_at < created_at OR closed_at < created_at
     OR closed_at > updated_at OR updated_at > now()) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'number is <year of creation>-<sequence>', id, number FROM incidents
  WHERE number !~ '^[0-9]{4}-[0-9]{6,}$'
     OR left(number, 4)::int <> extract(year FROM created_at)) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'number unique', NULL::bigint, number FROM incidents GROUP BY number
 HAVING count(*) > 1) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'regulator and regulated_at together', id, state FROM incidents
  WHERE (regulator_id IS NULL) <> (regulated_at IS NULL)) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'patient form from submission on', id, state FROM incidents
  WHERE state IN ('awaiting_regulation', 'regulated', 'dispatched', 'closed')
    AND (patient_name IS NULL OR priority IS NULL OR occurrence_type IS NULL)) v(c, id, x) GROUP BY c;

-- History: versions 1..version in id order, times within the incident's life, and the last
-- state change is the incident's state, at its `waiting_since`.
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (WITH h AS (
    SELECT incident_id, version, at, changes,
           row_number() OVER w AS rn, lag(id) OVER w AS prev_id, id, lag(at) OVER w AS prev_at
      FROM incident_history WINDOW w AS (PARTITION BY incident_id ORDER BY version)
), per AS (
    SELECT incident_id, count(*) AS n, max(version) AS last_version, min(at) AS first_at,
           max(at) AS last_at,
           bool_or(rn <> version OR id < prev_id OR at < prev_at) AS disorder,
           (array_agg(changes -> 'state' ->> 'to' ORDER BY version DESC)
               FILTER (WHERE changes ? 'state'))[1] AS last_state,
           (array_agg(at ORDER BY version DESC) FILTER (WHERE changes ? 'state'))[1]
               AS last_state_at
      FROM h GROUP BY incident_id
)
SELECT 'history matches the incident', i.id,
       format('version %s, history %s/%s, state %s/%s', i.version, per.n, per.last_version,
              i.state, per.last_state)
  FROM incidents i LEFT JOIN per ON per.incident_id = i.id
 WHERE per.incident_id IS NULL OR per.disorder OR per.n <> i.version
    OR per.last_state IS DISTINCT FROM i.state OR per.first_at <> i.created_at
    OR per.last_state_at IS DISTINCT FROM i.waiting_since
    OR per.last_at > i.updated_at
) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'history starts with created', incident_id, action FROM incident_history
  WHERE version = 1 AND action <> 'created') v(c, id, x) GROUP BY c;

-- Technical decisions: one per regulated incident, at its regulation.
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'decision at regulation', i.id, i.state FROM incidents i
   LEFT JOIN technical_decisions t ON t.incident_id = i.id
  WHERE i.regulated_at IS DISTINCT FROM t.decided_at) v(c, id, x) GROUP BY c;

-- Dispatches: a unit busy on one incident at most; unreleased dispatches only on dispatched
-- incidents, each of which has exactly one; status is the last step reached.
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'unit on two unreleased dispatches', mobile_unit_id, count(*)::text FROM dispatches
  WHERE status <> 'released' GROUP BY mobile_unit_id HAVING count(*) > 1) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'dispatched incidents have one unreleased dispatch', i.id, i.state FROM incidents i
   LEFT JOIN dispatches d ON d.incident_id = i.id AND d.status <> 'released'
  GROUP BY i.id, i.state HAVING (i.state = 'dispatched') <> (count(d.id) = 1) OR count(d.id) > 1
) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'dispatch status is its last step', incident_id, status FROM dispatches
  WHERE status <> CASE WHEN released_at IS NOT NULL THEN 'released'
                       WHEN at_destination_at IS NOT NULL THEN 'at_destination'
                       WHEN transporting_at IS NOT NULL THEN 'transporting'
                       WHEN on_scene_at IS NOT NULL THEN 'on_scene'
                       WHEN en_route_at IS NOT NULL THEN 'en_route'
                       ELSE 'assigned' END) v(c, id, x) GROUP BY c;
-- A dispatch lies within its incident, its steps in order (a destination may be named with the
-- dispatch itself, before the unit transports: docs/dispatch-routes.md, the dispatch write).
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'dispatch within its incident', d.incident_id, i.state FROM dispatches d
   JOIN incidents i ON i.id = d.incident_id
  WHERE d.assigned_at < i.regulated_at OR i.regulated_at IS NULL
     OR d.released_at > coalesce(i.closed_at, i.updated_at)
     OR d.en_route_at < d.assigned_at OR d.on_scene_at < d.en_route_at
     OR d.released_at < d.on_scene_at
     OR i.state NOT IN ('dispatched', 'closed')) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'intercurrence on a dispatched incident', x.incident_id, ''
   FROM incident_intercurrences x
  WHERE NOT EXISTS (SELECT 1 FROM dispatches d WHERE d.incident_id = x.incident_id)) v(c, id, x) GROUP BY c;

-- Prank calls: exactly the prank incidents, from the caller's phone (and its key), with the
-- incident's number, at the closing.
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'prank call iff prank incident', i.id, i.state FROM incidents i
   FULL JOIN prank_calls p ON p.incident_id = i.id
  WHERE (i.state = 'prank') <> (p.id IS NOT NULL) OR i.id IS NULL
     OR p.phone <> i.caller_phone OR p.phone_key <> i.caller_phone_key
     OR p.incident_number <> i.number
     OR p.recorded_at <> i.closed_at) v(c, id, x) GROUP BY c;
-- Phone keys (domain::phone::Phone::key): the national digits of every drawn phone.
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'caller phone key', i.id, i.caller_phone FROM incidents i
  WHERE i.caller_phone LIKE '(%' AND i.caller_phone_key <> regexp_replace(i.caller_phone, '\D', '', 'g')) v(c, id, x) GROUP BY c;

-- The phases the reports read (docs/dispatch-routes.md, "How the report is kept"): one row per
-- incident and per dispatch, with the incident's call time, priority, the unit and where it
-- takes the patient; every phase complete exactly when both its times are there in order,
-- out of order exactly when they are reversed, and its seconds their interval; the units an
-- incident's phases name are the first assigned, the first on scene and the last released.
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'incident phases kept', coalesce(i.id, k.incident_id), i.state FROM incidents i
   FULL JOIN incident_phases k ON k.incident_id = i.id
  WHERE i.id IS NULL OR k.incident_id IS NULL OR k.call_received_at <> i.call_received_at
     OR k.priority IS DISTINCT FROM i.priority) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'unit phases kept', coalesce(d.incident_id, k.incident_id), d.status FROM dispatches d
   JOIN incidents i ON i.id = d.incident_id
   FULL JOIN unit_phases k ON k.dispatch_id = d.id
  WHERE d.id IS NULL OR k.dispatch_id IS NULL OR k.incident_id <> d.incident_id
     OR k.call_received_at <> i.call_received_at OR k.priority IS DISTINCT FROM i.priority
     OR k.mobile_unit_id <> d.mobile_unit_id
     OR k.health_unit_id IS DISTINCT FROM coalesce(d.destination_id, i.destination_health_unit_id)
) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'unit phase is its two times', d.incident_id, p.phase || ': ' || p.status FROM unit_phases k
   JOIN dispatches d ON d.id = k.dispatch_id
  CROSS JOIN LATERAL (VALUES
     ('turnout', k.turnout_status, k.turnout_seconds, d.assigned_at, d.en_route_at),
     ('travel', k.travel_status, k.travel_seconds, d.en_route_at, d.on_scene_at),
     ('on_scene', k.on_scene_status, k.on_scene_seconds, d.on_scene_at, d.transporting_at),
     ('transport', k.transport_status, k.transport_seconds, d.transporting_at, d.at_destination_at),
     ('hospital_hold', k.hospital_hold_status, k.hospital_hold_seconds, d.at_destination_at,
      d.handed_over_at),
     ('return_to_service', k.return_to_service_status, k.return_to_service_seconds,
      coalesce(d.handed_over_at, d.at_destination_at), d.released_at)
  ) AS p(phase, status, seconds, started, ended)
  WHERE (p.status = 'complete') <> coalesce(p.ended >= p.started, false)
     OR (p.status = 'out_of_order') <> coalesce(p.ended < p.started, false)
     OR p.seconds IS DISTINCT FROM
        CASE WHEN p.ended >= p.started THEN extract(epoch FROM p.ended - p.started)::float8 END
) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (WITH m AS (
    SELECT incident_id,
           (array_agg(id ORDER BY assigned_at, id))[1] AS first_assigned,
           (array_agg(id ORDER BY on_scene_at, id) FILTER (WHERE on_scene_at IS NOT NULL))[1]
               AS first_on_scene,
           (array_agg(id ORDER BY released_at DESC, id) FILTER (WHERE released_at IS NOT NULL))[1]
               AS last_released,
           bool_or(released_at IS NULL) AS any_unreleased
      FROM dispatches GROUP BY incident_id)
 SELECT 'incident phase is its two times', i.id, p.phase || ': ' || p.status
   FROM incident_phases k
   JOIN incidents i ON i.id = k.incident_id
   LEFT JOIN m ON m.incident_id = i.id
   LEFT JOIN dispatches da ON da.id = k.activation_dispatch_id
   LEFT JOIN dispatches dr ON dr.id = k.response_dispatch_id
   LEFT JOIN dispatches dt ON dt.id = k.total_dispatch_id
  CROSS JOIN LATERAL (VALUES
     ('call_taking', k.call_taking_status, k.call_taking_seconds, i.call_received_at,
      i.submitted_at, true),
     ('regulation', k.regulation_status, k.regulation_seconds, i.submitted_at, i.regulated_at,
      true),
     ('activation', k.activation_status, k.activation_seconds, i.regulated_at, da.assigned_at,
      k.activation_dispatch_id IS NOT DISTINCT FROM m.first_assigned),
     ('response', k.response_status, k.response_seconds, i.call_received_at, dr.on_scene_at,
      k.response_dispatch_id IS NOT DISTINCT FROM m.first_on_scene),
     ('total', k.total_status, k.total_seconds, i.call_received_at, dt.released_at,
      k.total_dispatch_id IS NOT DISTINCT FROM
          CASE WHEN NOT m.any_unreleased AND i.state IN ('closed', 'cancelled', 'prank')
               THEN m.last_released END)
  ) AS p(phase, status, seconds, started, ended, by_the_right_unit)
  WHERE NOT p.by_the_right_unit
     OR (p.status = 'complete') <> coalesce(p.ended >= p.started, false)
     OR (p.status = 'out_of_order') <> coalesce(p.ended < p.started, false)
     OR p.seconds IS DISTINCT FROM
        CASE WHEN p.ended >= p.started THEN extract(epoch FROM p.ended - p.started)::float8 END
) v(c, id, x) GROUP BY c;

-- The rebuilt constraints and indexes are all there and valid.
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'constraint not validated', NULL::bigint, conname::text FROM pg_constraint
  WHERE connamespace = 'dispatch'::regnamespace AND NOT convalidated) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'index not valid', NULL::bigint, indexrelid::regclass::text FROM pg_index
  WHERE indrelid::regclass::text IN ('incidents', 'incident_history', 'technical_decisions',
                                     'dispatches', 'incident_intercurrences', 'prank_calls',
                                     'incident_phases', 'unit_phases')
    AND NOT (indisvalid AND indisready)) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'a secondary index is missing', NULL::bigint, name FROM (VALUES
    ('incidents_search'), ('incidents_newest'), ('incidents_state'), ('incidents_caller_phone_key'),
    ('incidents_phone_digits'), ('incidents_open'), ('incidents_regulator'),
    ('incidents_assignee'), ('incidents_queue'),
    ('incidents_number_key'), ('incident_history_incident'), ('prank_calls_phone_key'),
    ('prank_calls_incident_id_key'), ('technical_decisions_incident'), ('dispatches_incident'),
    ('dispatches_unit_busy'), ('incident_intercurrences_incident'),
    ('incident_phases_received'), ('unit_phases_received')) AS v(name)
  WHERE to_regclass('dispatch.' || name) IS NULL) v(c, id, x) GROUP BY c;
