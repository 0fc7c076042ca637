-- Grows a freshly seeded dispatch-api database (`dispatch-api migrate` + `seed`: 3,000 demo
-- incidents) to :n incidents, as a centre that has registered 3,000-5,000 calls a day for
-- 18 months up to :'anchor'. Run by bench/scale/build-dispatch.sh (see bench/scale/README.md):
--
--   psql -v n=2000000 -v anchor="2026-11-23 23:00+00" -f dispatch-grow.sql $DATABASE_URL
--
-- Shape:
-- * Every incident is a copy of a demo incident (its template): state, forms, users, history,
--   technical decision, dispatch, intercurrence, prank call and the phases the reports read
--   (incident_phases, unit_phases: the demo's were judged by its writes; their hours summed
--   again at the end), every time shifted
--   by the same amount, so each incident keeps the demo's durations and its invariants.
-- * Generated incidents copy only demo incidents in a final state (closed, cancelled,
--   prank). The demo incidents themselves become the newest 3,000 (the last ~20 hours at
--   2 M), so the only open incidents are the demo's 300, all in the last hours.
-- * Caller and patient names, phones, addresses and cities are drawn again for every
--   generated incident from the words of the demo data (names, streets, places, cities and
--   their area codes), with new streets made of the demo's street kinds and place names.
-- * Prank calls come from a pool of n/400 numbers (about 50 prank calls each over the
--   18 months); 4% of the other calls come from those numbers too.
-- * Ids follow time: incident p (1 = oldest) has id p, the demo incidents are renumbered to
--   the top ids; child rows are written in time order. Incident numbers are
--   "<year>-<sequence in the year>" (at least six digits), in creation order.
-- * Calls follow a day's rhythm: fewest at 04:00 Brasília time (07:00 UTC), four times as
--   many at 16:00 (19:00 UTC).
-- Secondary indexes, unique and foreign-key constraints of the six incident tables are
-- dropped for the load and created again afterwards (from their saved definitions).
\set ON_ERROR_STOP on
SET search_path TO dispatch, public;
SET TIME ZONE 'UTC';
SET synchronous_commit = off;
SET work_mem = '256MB';
SET maintenance_work_mem = '1GB';
SET client_min_messages = warning;

\timing on

DROP SCHEMA IF EXISTS scale_build CASCADE;
CREATE SCHEMA scale_build;

-- Deterministic "random" integer in [0, 2^31) for row p and a salt.
CREATE FUNCTION scale_build.h(bigint, bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT hashint8extended($1, $2) & 2147483647 $$;

-- A sequence number with at least six digits (lpad would cut a seventh).
CREATE FUNCTION scale_build.pad6(bigint) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN $1 < 1000000 THEN lpad($1::text, 6, '0') ELSE $1::text END $$;

-- 1. The demo data, as the templates.
DO $$
BEGIN
    -- The demo seed writes 3,000 incidents' worth of history plus its open ones (3,016).
    IF (SELECT count(*) FROM incidents) NOT BETWEEN 3000 AND 3100
       OR EXISTS (SELECT 1 FROM incidents WHERE related_incident_id IS NOT NULL) THEN
        RAISE EXCEPTION 'expected a freshly seeded database (about 3,000 demo incidents)';
    END IF;
END $$;
CREATE TABLE scale_build.demo_incidents AS SELECT * FROM incidents;
CREATE TABLE scale_build.demo_history AS SELECT * FROM incident_history;
CREATE TABLE scale_build.demo_decisions AS SELECT * FROM technical_decisions;
CREATE TABLE scale_build.demo_dispatches AS SELECT * FROM dispatches;
CREATE TABLE scale_build.demo_intercurrences AS SELECT * FROM incident_intercurrences;
CREATE TABLE scale_build.demo_pranks AS SELECT * FROM prank_calls;
CREATE TABLE scale_build.demo_incident_phases AS SELECT * FROM incident_phases;
CREATE TABLE scale_build.demo_unit_phases AS SELECT * FROM unit_phases;
CREATE INDEX ON scale_build.demo_history (incident_id);
CREATE TABLE scale_build.templates AS
    SELECT row_number() OVER (ORDER BY id) - 1 AS i, id
      FROM scale_build.demo_incidents WHERE state IN ('closed', 'cancelled', 'prank');

-- 2. The words of the demo data.
CREATE TABLE scale_build.people AS
    SELECT caller_name AS name FROM scale_build.demo_incidents
    UNION SELECT patient_name FROM scale_build.demo_incidents WHERE patient_name IS NOT NULL;
CREATE TABLE scale_build.words AS
SELECT
    (SELECT array_agg(DISTINCT split_part(name, ' ', 1)) FROM scale_build.people) AS first_names,
    (SELECT array_agg(DISTINCT m[1])
       FROM scale_build.people,
            regexp_matches(substr(name, strpos(name, ' ') + 1), '(da \S+|\S+)', 'g') AS m)
        AS last_names,
    (SELECT array_agg(DISTINCT split_part(address, ', ', 1)) FROM scale_build.demo_incidents)
        AS streets,
    -- Street kinds with the demo's frequencies (Rua more often than Travessa).
    (SELECT array_agg(split_part(s, ' ', 1))
       FROM (SELECT DISTINCT split_part(address, ', ', 1) AS s
               FROM scale_build.demo_incidents) d) AS street_kinds,
    (SELECT array_agg(DISTINCT n) FROM (
        SELECT substr(s, strpos(s, ' ') + 1) AS n
          FROM (SELECT DISTINCT split_part(address, ', ', 1) AS s
                  FROM scale_build.demo_incidents) d
        UNION SELECT split_part(address, ' - ', 2) FROM scale_build.demo_incidents) x)
        AS street_names,
    (SELECT array_agg(DISTINCT split_part(address, ' - ', 2)) FROM scale_build.demo_incidents)
        AS places;
-- Each city with its area code (the prank numbers, all (12), left out).
CREATE TABLE scale_build.cities AS
    SELECT row_number() OVER (ORDER BY city) - 1 AS i, city, ddd FROM (
        SELECT DISTINCT ON (city) city, substr(caller_phone, 2, 2) AS ddd
          FROM scale_build.demo_incidents
         WHERE caller_phone NOT IN (SELECT phone FROM scale_build.demo_pranks)
         GROUP BY city, substr(caller_phone, 2, 2)
         ORDER BY city, count(*) DESC) c;

-- 3. The plan: one row per incident p = 1..n in time order, with its template and time.
CREATE TABLE scale_build.params AS
SELECT extract(epoch FROM :'anchor'::timestamptz)::float8 AS anchor_s,
       548 * 86400.0::float8 AS span_s,
       :n::bigint AS n,
       (SELECT count(*) FROM scale_build.demo_incidents) AS d,
       (SELECT count(*) FROM scale_build.templates) AS nt,
       (SELECT count(*) FROM scale_build.cities) AS nc,
       greatest(12, :n::bigint / 400) AS prank_pool,
       0.6 * 86400 / (2 * pi()) AS amp,
       7.0 / 24 AS phi;
-- The day's rhythm warps time by t -> t + amp * sin(2 pi (t / day - phi)) (monotone: 0.6 < 1,
-- fewest calls at phi = 07:00 UTC); end_s is the time the warp takes to the anchor (a fixed
-- point, found by iterating).
ALTER TABLE scale_build.params ADD COLUMN end_s float8;
UPDATE scale_build.params k SET end_s = (
    WITH RECURSIVE it(i, x) AS (
        SELECT 0, k.anchor_s
        UNION ALL
        SELECT i + 1, k.anchor_s - k.amp * sin(2 * pi() * (x / 86400 - k.phi)) FROM it WHERE i < 60)
    SELECT x FROM it WHERE i = 60);

CREATE TABLE scale_build.timed AS
WITH demo AS (
    SELECT row_number() OVER (ORDER BY created_at, id) AS r, id FROM scale_build.demo_incidents
), pos AS (
    SELECT g.p, g.p > k.n - k.d AS demo,
           coalesce(demo.id, t.id) AS template,
           k.end_s - k.span_s + (g.p - 1 + scale_build.h(g.p, 2) / 2147483648.0) * k.span_s / k.n
               AS t_lin
      FROM scale_build.params k
     CROSS JOIN generate_series(1, k.n) AS g(p)
      LEFT JOIN demo ON demo.r = g.p - (k.n - k.d)
      LEFT JOIN scale_build.templates t ON g.p <= k.n - k.d AND t.i = scale_build.h(g.p, 1) % k.nt
)
SELECT pos.p, pos.demo, pos.template,
       -- The day's rhythm, and never so late that the incident's last step would lie after
       -- the anchor.
       least(pos.t_lin + k.amp * sin(2 * pi() * (pos.t_lin / 86400 - k.phi)),
             k.anchor_s - extract(epoch FROM d.updated_at - d.created_at) - 60
                 - scale_build.h(pos.p, 3) % 120) AS created_s,
       d.created_at AS template_created_at
  FROM pos
  JOIN scale_build.params k ON true
  JOIN scale_build.demo_incidents d ON d.id = pos.template;

CREATE TABLE scale_build.plan AS
WITH numbered AS (
    -- Every time of the incident moves by delta (whole microseconds), its creation too.
    SELECT t.p, t.demo, t.template, t.template_created_at + d.delta AS created_at, d.delta,
           extract(year FROM t.template_created_at + d.delta)::int AS year
      FROM scale_build.timed t
     CROSS JOIN LATERAL (
         SELECT (t.created_s - extract(epoch FROM t.template_created_at)) * interval '1 second'
             AS delta) d
), phones AS (
    SELECT n.*, d.state, d.patient_name AS t_patient, d.caller_name AS t_caller,
           -- A prank pool number for prank calls and 4% of the others.
           CASE WHEN d.state = 'prank' OR scale_build.h(n.p, 9) % 100 < 4
                THEN scale_build.h(n.p, 10) % k.prank_pool END AS pool
      FROM numbered n
      JOIN scale_build.demo_incidents d ON d.id = n.template
      JOIN scale_build.params k ON true
)
SELECT p.p, p.demo, p.template, p.created_at, p.delta,
       p.year || '-' || scale_build.pad6(row_number() OVER (PARTITION BY p.year
                                                            ORDER BY p.created_at, p.p)) AS number,
       CASE WHEN NOT p.demo THEN c.city END AS city,
       CASE WHEN p.demo THEN NULL
            WHEN p.pool IS NOT NULL THEN
                '(' || c.ddd || ') 99' || lpad((p.pool % 1000)::text, 3, '0') || '-'
                || lpad((scale_build.h(p.pool, 20) % 10000)::text, 4, '0')
            ELSE '(' || c.ddd || ') 9' || lpad((scale_build.h(p.p, 7) % 10000)::text, 4, '0')
                 || '-' || lpad((scale_build.h(p.p, 8) % 10000)::text, 4, '0')
       END AS caller_phone,
       CASE WHEN NOT p.demo THEN
           w.first_names[1 + scale_build.h(p.p, 4) % cardinality(w.first_names)] || ' '
           || w.last_names[1 + scale_build.h(p.p, 5) % cardinality(w.last_names)] || ' '
           || w.last_names[1 + scale_build.h(p.p, 6) % cardinality(w.last_names)]
       END AS caller_name,
       CASE WHEN NOT p.demo THEN
           w.first_names[1 + scale_build.h(p.p, 12) % cardinality(w.first_names)] || ' '
           || w.last_names[1 + scale_build.h(p.p, 13) % cardinality(w.last_names)] || ' '
           || w.last_names[1 + scale_build.h(p.p, 14) % cardinality(w.last_names)]
       END AS other_patient,
       CASE WHEN NOT p.demo THEN
           CASE WHEN scale_build.h(p.p, 15) % 2 = 0
                THEN w.streets[1 + scale_build.h(p.p, 16) % cardinality(w.streets)]
                ELSE w.street_kinds[1 + scale_build.h(p.p, 16) % cardinality(w.street_kinds)] || ' '
                     || w.street_names[1 + scale_build.h(p.p, 17) % cardinality(w.street_names)]
           END || ', ' || (10 + scale_build.h(p.p, 18) % 2000) || ' - '
           || w.places[1 + scale_build.h(p.p, 19) % cardinality(w.places)]
       END AS address,
       p.t_patient, p.t_caller
  FROM phones p
  JOIN scale_build.params k ON true
  CROSS JOIN scale_build.words w
  JOIN scale_build.cities c
    ON c.i = CASE WHEN p.pool IS NOT NULL THEN p.pool % k.nc ELSE scale_build.h(p.p, 11) % k.nc END
 ORDER BY p.p;
DROP TABLE scale_build.timed;

-- 4. Drop secondary indexes and constraints of the incident tables; saved to be rebuilt.
-- The patients' access log (empty after the seed) references the incidents and refuses
-- TRUNCATE (it is append-only): its foreign key is dropped and created again too.
CREATE TABLE scale_build.ddl AS
SELECT 'fk' AS kind, c.relname AS tbl, k.conname AS name, pg_get_constraintdef(k.oid) AS def
  FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
 WHERE c.relnamespace = 'dispatch'::regnamespace AND k.contype = 'f'
   AND c.relname IN ('incidents', 'incident_history', 'technical_decisions', 'dispatches',
                     'incident_intercurrences', 'prank_calls', 'patient_access_log',
                     'incident_phases', 'unit_phases')
UNION ALL
SELECT 'unique', c.relname, k.conname, pg_get_constraintdef(k.oid)
  FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
 WHERE c.relnamespace = 'dispatch'::regnamespace AND k.contype = 'u'
   AND c.relname IN ('incidents', 'incident_history', 'technical_decisions', 'dispatches',
                     'incident_intercurrences', 'prank_calls', 'incident_phases',
                     'unit_phases')
UNION ALL
SELECT 'index', c.relname, i.relname, pg_get_indexdef(i.oid)
  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
 WHERE c.relnamespace = 'dispatch'::regnamespace AND NOT x.indisprimary
   AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.oid AND k.conrelid = c.oid)
   AND c.relname IN ('incidents', 'incident_history', 'technical_decisions', 'dispatches',
                     'incident_intercurrences', 'prank_calls', 'incident_phases',
                     'unit_phases');

SELECT format('ALTER TABLE dispatch.%I DROP CONSTRAINT %I', tbl, name)
  FROM scale_build.ddl WHERE kind IN ('fk', 'unique') ORDER BY kind = 'unique', name \gexec
SELECT format('DROP INDEX dispatch.%I', name) FROM scale_build.ddl WHERE kind = 'index' \gexec

-- 5. Write everything again in time order: the demo incidents at the top ids, the new ones
-- below. TRUNCATE fires no row trigger (incident_history's append-only trigger is for
-- UPDATE and DELETE) and restarts the ids. The access log (append-only, TRUNCATE refused)
-- names incidents too: its foreign key is dropped above and rebuilt below (the seed reads
-- nothing, so it is empty). The switch's calls name incidents as well; the seed rings none,
-- so they are emptied with the incidents. Emptying the kept phases empties their hours (a
-- trigger).
TRUNCATE incidents, incident_history, technical_decisions, dispatches, incident_intercurrences,
         prank_calls, offload_alerts, incident_phases, unit_phases, calls RESTART IDENTITY;

INSERT INTO incidents (id, number, state, version, created_by, created_at, updated_at,
                       caller_name, caller_phone, caller_phone_key, address, city, complaint,
                       related_incident_id, occurrence_type, priority, occurrence_notes,
                       patient_name, patient_age, patient_sex, regulator_id, assigned_to_id,
                       regulated_at, conclusion, closed_at, call_received_at, submitted_at,
                       waiting_since, destination_health_unit_id)
SELECT p.p, p.number, d.state, d.version, d.created_by, d.created_at + p.delta,
       d.updated_at + p.delta,
       coalesce(p.caller_name, d.caller_name), coalesce(p.caller_phone, d.caller_phone),
       -- A drawn phone is "(DD) 9XXXX-XXXX": its key (domain::phone::Phone::key) is its
       -- national digits; a demo incident keeps the key the service gave it.
       coalesce(regexp_replace(p.caller_phone, '\D', '', 'g'), d.caller_phone_key),
       coalesce(p.address, d.address), coalesce(p.city, d.city), d.complaint, NULL,
       d.occurrence_type, d.priority, d.occurrence_notes,
       CASE WHEN p.demo OR d.patient_name IS NULL THEN d.patient_name
            WHEN d.patient_name = d.caller_name THEN p.caller_name
            ELSE p.other_patient END,
       d.patient_age, d.patient_sex, d.regulator_id, d.assigned_to_id,
       d.regulated_at + p.delta, d.conclusion, d.closed_at + p.delta,
       d.call_received_at + p.delta, d.submitted_at + p.delta, d.waiting_since + p.delta,
       d.destination_health_unit_id
  FROM scale_build.plan p
  JOIN scale_build.demo_incidents d ON d.id = p.template
 ORDER BY p.p;
SELECT setval(pg_get_serial_sequence('dispatch.incidents', 'id'), (SELECT max(id) FROM incidents));

INSERT INTO incident_history (incident_id, version, user_id, at, action, changes)
SELECT p.p, h.version, h.user_id, h.at + p.delta, h.action, h.changes
  FROM scale_build.plan p
  JOIN scale_build.demo_history h ON h.incident_id = p.template
 ORDER BY h.at + p.delta, p.p, h.version;

INSERT INTO technical_decisions (incident_id, action_id, mobile_unit_type_id, regulator_id,
                                 notes, decided_at)
SELECT p.p, t.action_id, t.mobile_unit_type_id, t.regulator_id, t.notes, t.decided_at + p.delta
  FROM scale_build.plan p
  JOIN scale_build.demo_decisions t ON t.incident_id = p.template
 ORDER BY t.decided_at + p.delta, p.p, t.id;

INSERT INTO dispatches (incident_id, mobile_unit_id, status, destination_id, assigned_by,
                        assigned_at, en_route_at, on_scene_at, transporting_at,
                        at_destination_at, handed_over_at, released_at)
SELECT p.p, x.mobile_unit_id, x.status, x.destination_id, x.assigned_by, x.assigned_at + p.delta,
       x.en_route_at + p.delta, x.on_scene_at + p.delta, x.transporting_at + p.delta,
       x.at_destination_at + p.delta, x.handed_over_at + p.delta, x.released_at + p.delta
  FROM scale_build.plan p
  JOIN scale_build.demo_dispatches x ON x.incident_id = p.template
 ORDER BY x.assigned_at + p.delta, p.p, x.id;

-- Each copied dispatch and its template (an incident has one dispatch per unit at a time).
CREATE TABLE scale_build.dispatch_map AS
SELECT x.id AS template_id, d.id, d.incident_id
  FROM scale_build.plan p
  JOIN scale_build.demo_dispatches x ON x.incident_id = p.template
  JOIN dispatches d ON d.incident_id = p.p AND d.mobile_unit_id = x.mobile_unit_id
                   AND d.assigned_at = x.assigned_at + p.delta;
CREATE UNIQUE INDEX ON scale_build.dispatch_map (incident_id, template_id);

-- The phases: the template's, judged by the demo's writes; only the call's time moves (every
-- time moved by the same amount, so every status and interval stays), and the dispatches
-- named are the copies'. Their hours (incident_phase_hours, unit_phase_hours: kept row by row
-- by triggers as the writes change the phases) are summed once afterwards, set-based, as the
-- migration that made them does.
ALTER TABLE incident_phases DISABLE TRIGGER incident_phases_to_hours;
ALTER TABLE unit_phases DISABLE TRIGGER unit_phases_to_hours;
INSERT INTO incident_phases (incident_id, call_received_at, priority,
                             call_taking_status, call_taking_seconds, regulation_status,
                             regulation_seconds, activation_status, activation_seconds,
                             activation_dispatch_id, response_status, response_seconds,
                             response_dispatch_id, total_status, total_seconds,
                             total_dispatch_id)
SELECT p.p, x.call_received_at + p.delta, x.priority,
       x.call_taking_status, x.call_taking_seconds, x.regulation_status, x.regulation_seconds,
       x.activation_status, x.activation_seconds, ma.id,
       x.response_status, x.response_seconds, mr.id,
       x.total_status, x.total_seconds, mt.id
  FROM scale_build.plan p
  JOIN scale_build.demo_incident_phases x ON x.incident_id = p.template
  LEFT JOIN scale_build.dispatch_map ma
         ON ma.template_id = x.activation_dispatch_id
        AND ma.incident_id = p.p
  LEFT JOIN scale_build.dispatch_map mr
         ON mr.template_id = x.response_dispatch_id
        AND mr.incident_id = p.p
  LEFT JOIN scale_build.dispatch_map mt
         ON mt.template_id = x.total_dispatch_id
        AND mt.incident_id = p.p
 ORDER BY x.call_received_at + p.delta, p.p;

INSERT INTO unit_phases (dispatch_id, incident_id, call_received_at, priority, mobile_unit_id,
                         health_unit_id, turnout_status, turnout_seconds, travel_status,
                         travel_seconds, on_scene_status, on_scene_seconds, transport_status,
                         transport_seconds, hospital_hold_status, hospital_hold_seconds,
                         return_to_service_status, return_to_service_seconds)
SELECT m.id, m.incident_id, x.call_received_at + p.delta, x.priority, x.mobile_unit_id,
       x.health_unit_id, x.turnout_status, x.turnout_seconds, x.travel_status,
       x.travel_seconds, x.on_scene_status, x.on_scene_seconds, x.transport_status,
       x.transport_seconds, x.hospital_hold_status, x.hospital_hold_seconds,
       x.return_to_service_status, x.return_to_service_seconds
  FROM scale_build.dispatch_map m
  JOIN scale_build.plan p ON p.p = m.incident_id
  JOIN scale_build.demo_unit_phases x ON x.dispatch_id = m.template_id
 ORDER BY x.call_received_at + p.delta, m.id;

SELECT dispatch.response_hours_rebuild();
ALTER TABLE incident_phases ENABLE TRIGGER incident_phases_to_hours;
ALTER TABLE unit_phases ENABLE TRIGGER unit_phases_to_hours;

INSERT INTO incident_intercurrences (incident_id, intercurrence_id, notes, recorded_by,
                                     recorded_at)
SELECT p.p, x.intercurrence_id, x.notes, x.recorded_by, x.recorded_at + p.delta
  FROM scale_build.plan p
  JOIN scale_build.demo_intercurrences x ON x.incident_id = p.template
 ORDER BY x.recorded_at + p.delta, p.p, x.id;

INSERT INTO prank_calls (phone, phone_key, incident_id, incident_number, recorded_by,
                         recorded_at)
SELECT coalesce(p.caller_phone, d.caller_phone),
       coalesce(regexp_replace(p.caller_phone, '\D', '', 'g'), d.caller_phone_key),
       p.p, p.number, x.recorded_by, x.recorded_at + p.delta
  FROM scale_build.plan p
  JOIN scale_build.demo_pranks x ON x.incident_id = p.template
  JOIN scale_build.demo_incidents d ON d.id = p.template
 ORDER BY x.recorded_at + p.delta, p.p;

-- 6. Indexes and constraints back, from their saved definitions.
SELECT format('ALTER TABLE dispatch.%I ADD CONSTRAINT %I %s', tbl, name, def)
  FROM scale_build.ddl WHERE kind = 'unique' ORDER BY name \gexec
SELECT def FROM scale_build.ddl WHERE kind = 'index' ORDER BY name \gexec
SELECT format('ALTER TABLE dispatch.%I ADD CONSTRAINT %I %s', tbl, name, def)
  FROM scale_build.ddl WHERE kind = 'fk' ORDER BY name \gexec

DROP SCHEMA scale_build CASCADE;
