-- The response-time report's hours (docs/dispatch-routes.md, "How the report is kept"): the
-- phases the writes keep (`incident_phases`, `unit_phases`), summed per hour of the call and
-- per priority, so a report of whole hours reads one row per hour and priority instead of
-- every incident's and every unit's row (a month at 2,000,000 incidents: about 7,000 rows
-- instead of 180,000; bench/scale/README.md).
--
-- Exact, not estimated: each row keeps every measured interval of its hour itself (the seconds
-- of its `complete` phases, unordered, one per phase of an incident or unit), and counts the
-- `missing` and `out_of_order` ones, so a report takes its counts, maxima, shares within the
-- targets (applied when read, as before) and percentiles (PostgreSQL's `percentile_cont`)
-- from exactly the values the raw rows hold. `priority` is `''` for an incident without one
-- (the report's targets key it so too). An hour is one of UTC (`date_bin` from 2000-01-01
-- 00:00 UTC): a centre's local days and hours are whole UTC hours wherever the zone's offset
-- is whole hours; the report checks that and reads the raw rows otherwise.
--
-- Kept by triggers on the kept phases, in the transaction of the write that changed them: a
-- row's old share leaves its hour and its new share joins its hour (an incident that closes
-- late, a priority changed, a unit released: the past hour moves with it, so an hour is never
-- stale and today's is as exact as last month's). Two writes on the same hour and priority
-- wait for each other only for the rest of their (short) transactions; a row that moves
-- takes its two hours in key order.

-- One row per hour and priority: the calls received, and per incident phase
-- (domain::times::Phase::OF_INCIDENT) the measured seconds and the missing and out-of-order counts.
CREATE TABLE dispatch.incident_phase_hours (
    hour TIMESTAMPTZ NOT NULL,
    priority TEXT NOT NULL,
    calls INTEGER NOT NULL,
    call_taking_seconds DOUBLE PRECISION[] NOT NULL,
    call_taking_missing INTEGER NOT NULL,
    call_taking_out_of_order INTEGER NOT NULL,
    regulation_seconds DOUBLE PRECISION[] NOT NULL,
    regulation_missing INTEGER NOT NULL,
    regulation_out_of_order INTEGER NOT NULL,
    activation_seconds DOUBLE PRECISION[] NOT NULL,
    activation_missing INTEGER NOT NULL,
    activation_out_of_order INTEGER NOT NULL,
    response_seconds DOUBLE PRECISION[] NOT NULL,
    response_missing INTEGER NOT NULL,
    response_out_of_order INTEGER NOT NULL,
    total_seconds DOUBLE PRECISION[] NOT NULL,
    total_missing INTEGER NOT NULL,
    total_out_of_order INTEGER NOT NULL,
    PRIMARY KEY (hour, priority),
    CONSTRAINT incident_phase_hours_counts CHECK (
        calls >= 0
        AND call_taking_missing >= 0 AND call_taking_out_of_order >= 0
        AND regulation_missing >= 0 AND regulation_out_of_order >= 0
        AND activation_missing >= 0 AND activation_out_of_order >= 0
        AND response_missing >= 0 AND response_out_of_order >= 0
        AND total_missing >= 0 AND total_out_of_order >= 0)
);

-- The same per unit phase (Phase::OF_UNIT), by the incident's call time and priority.
CREATE TABLE dispatch.unit_phase_hours (
    hour TIMESTAMPTZ NOT NULL,
    priority TEXT NOT NULL,
    turnout_seconds DOUBLE PRECISION[] NOT NULL,
    turnout_missing INTEGER NOT NULL,
    turnout_out_of_order INTEGER NOT NULL,
    travel_seconds DOUBLE PRECISION[] NOT NULL,
    travel_missing INTEGER NOT NULL,
    travel_out_of_order INTEGER NOT NULL,
    on_scene_seconds DOUBLE PRECISION[] NOT NULL,
    on_scene_missing INTEGER NOT NULL,
    on_scene_out_of_order INTEGER NOT NULL,
    transport_seconds DOUBLE PRECISION[] NOT NULL,
    transport_missing INTEGER NOT NULL,
    transport_out_of_order INTEGER NOT NULL,
    hospital_hold_seconds DOUBLE PRECISION[] NOT NULL,
    hospital_hold_missing INTEGER NOT NULL,
    hospital_hold_out_of_order INTEGER NOT NULL,
    return_to_service_seconds DOUBLE PRECISION[] NOT NULL,
    return_to_service_missing INTEGER NOT NULL,
    return_to_service_out_of_order INTEGER NOT NULL,
    PRIMARY KEY (hour, priority),
    CONSTRAINT unit_phase_hours_counts CHECK (
        turnout_missing >= 0 AND turnout_out_of_order >= 0
        AND travel_missing >= 0 AND travel_out_of_order >= 0
        AND on_scene_missing >= 0 AND on_scene_out_of_order >= 0
        AND transport_missing >= 0 AND transport_out_of_order >= 0
        AND hospital_hold_missing >= 0 AND hospital_hold_out_of_order >= 0
        AND return_to_service_missing >= 0 AND return_to_service_out_of_order >= 0)
);

-- One occurrence of `one` taken out of `seconds` (nothing when `one` is null: the phase was
-- not measured). A value that is not there means the hours no longer match the kept phases:
-- the write fails rather than leave a report wrong.
CREATE FUNCTION dispatch.seconds_without(seconds DOUBLE PRECISION[], one DOUBLE PRECISION)
    RETURNS DOUBLE PRECISION[] LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    at INTEGER;
BEGIN
    IF one IS NULL THEN
        RETURN seconds;
    END IF;
    at := array_position(seconds, one);
    IF at IS NULL THEN
        RAISE EXCEPTION 'response hours: % s is not kept in its hour', one;
    END IF;
    RETURN seconds[:at - 1] || seconds[at + 1:];
END $$;

-- A kept row's share (`sign` 1) joins its hour, or (-1) leaves it.
CREATE FUNCTION dispatch.incident_phase_hours_keep(r dispatch.incident_phases, sign INTEGER) RETURNS void
    LANGUAGE plpgsql AS $$
BEGIN
    IF sign > 0 THEN
        INSERT INTO dispatch.incident_phase_hours AS h VALUES (
            date_bin('1 hour', r.call_received_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), coalesce(r.priority, ''),
            1,
            array_remove(ARRAY[r.call_taking_seconds], NULL), (r.call_taking_status = 'missing')::int,
            (r.call_taking_status = 'out_of_order')::int,
            array_remove(ARRAY[r.regulation_seconds], NULL), (r.regulation_status = 'missing')::int,
            (r.regulation_status = 'out_of_order')::int,
            array_remove(ARRAY[r.activation_seconds], NULL), (r.activation_status = 'missing')::int,
            (r.activation_status = 'out_of_order')::int,
            array_remove(ARRAY[r.response_seconds], NULL), (r.response_status = 'missing')::int,
            (r.response_status = 'out_of_order')::int,
            array_remove(ARRAY[r.total_seconds], NULL), (r.total_status = 'missing')::int,
            (r.total_status = 'out_of_order')::int)
        ON CONFLICT (hour, priority) DO UPDATE SET
            calls = h.calls + 1,
            call_taking_seconds = h.call_taking_seconds || EXCLUDED.call_taking_seconds,
            call_taking_missing = h.call_taking_missing + EXCLUDED.call_taking_missing,
            call_taking_out_of_order = h.call_taking_out_of_order + EXCLUDED.call_taking_out_of_order,
            regulation_seconds = h.regulation_seconds || EXCLUDED.regulation_seconds,
            regulation_missing = h.regulation_missing + EXCLUDED.regulation_missing,
            regulation_out_of_order = h.regulation_out_of_order + EXCLUDED.regulation_out_of_order,
            activation_seconds = h.activation_seconds || EXCLUDED.activation_seconds,
            activation_missing = h.activation_missing + EXCLUDED.activation_missing,
            activation_out_of_order = h.activation_out_of_order + EXCLUDED.activation_out_of_order,
            response_seconds = h.response_seconds || EXCLUDED.response_seconds,
            response_missing = h.response_missing + EXCLUDED.response_missing,
            response_out_of_order = h.response_out_of_order + EXCLUDED.response_out_of_order,
            total_seconds = h.total_seconds || EXCLUDED.total_seconds,
            total_missing = h.total_missing + EXCLUDED.total_missing,
            total_out_of_order = h.total_out_of_order + EXCLUDED.total_out_of_order;
    ELSE
        UPDATE dispatch.incident_phase_hours AS h SET
            calls = h.calls - 1,
            call_taking_seconds = dispatch.seconds_without(h.call_taking_seconds, r.call_taking_seconds),
            call_taking_missing = h.call_taking_missing - (r.call_taking_status = 'missing')::int,
            call_taking_out_of_order = h.call_taking_out_of_order - (r.call_taking_status = 'out_of_order')::int,
            regulation_seconds = dispatch.seconds_without(h.regulation_seconds, r.regulation_seconds),
            regulation_missing = h.regulation_missing - (r.regulation_status = 'missing')::int,
            regulation_out_of_order = h.regulation_out_of_order - (r.regulation_status = 'out_of_order')::int,
            activation_seconds = dispatch.seconds_without(h.activation_seconds, r.activation_seconds),
            activation_missing = h.activation_missing - (r.activation_status = 'missing')::int,
            activation_out_of_order = h.activation_out_of_order - (r.activation_status = 'out_of_order')::int,
            response_seconds = dispatch.seconds_without(h.response_seconds, r.response_seconds),
            response_missing = h.response_missing - (r.response_status = 'missing')::int,
            response_out_of_order = h.response_out_of_order - (r.response_status = 'out_of_order')::int,
            total_seconds = dispatch.seconds_without(h.total_seconds, r.total_seconds),
            total_missing = h.total_missing - (r.total_status = 'missing')::int,
            total_out_of_order = h.total_out_of_order - (r.total_status = 'out_of_order')::int
         WHERE h.hour = date_bin('1 hour', r.call_received_at, TIMESTAMPTZ '2000-01-01 00:00:00+00')
           AND h.priority = coalesce(r.priority, '');
        IF NOT FOUND THEN
            RAISE EXCEPTION 'dispatch.incident_phase_hours: no hour kept for the call received at %', r.call_received_at;
        END IF;
    END IF;
END $$;
CREATE FUNCTION dispatch.unit_phase_hours_keep(r dispatch.unit_phases, sign INTEGER) RETURNS void
    LANGUAGE plpgsql AS $$
BEGIN
    IF sign > 0 THEN
        INSERT INTO dispatch.unit_phase_hours AS h VALUES (
            date_bin('1 hour', r.call_received_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), coalesce(r.priority, ''),
            array_remove(ARRAY[r.turnout_seconds], NULL), (r.turnout_status = 'missing')::int,
            (r.turnout_status = 'out_of_order')::int,
            array_remove(ARRAY[r.travel_seconds], NULL), (r.travel_status = 'missing')::int,
            (r.travel_status = 'out_of_order')::int,
            array_remove(ARRAY[r.on_scene_seconds], NULL), (r.on_scene_status = 'missing')::int,
            (r.on_scene_status = 'out_of_order')::int,
            array_remove(ARRAY[r.transport_seconds], NULL), (r.transport_status = 'missing')::int,
            (r.transport_status = 'out_of_order')::int,
            array_remove(ARRAY[r.hospital_hold_seconds], NULL), (r.hospital_hold_status = 'missing')::int,
            (r.hospital_hold_status = 'out_of_order')::int,
            array_remove(ARRAY[r.return_to_service_seconds], NULL), (r.return_to_service_status = 'missing')::int,
            (r.return_to_service_status = 'out_of_order')::int)
        ON CONFLICT (hour, priority) DO UPDATE SET
            turnout_seconds = h.turnout_seconds || EXCLUDED.turnout_seconds,
            turnout_missing = h.turnout_missing + EXCLUDED.turnout_missing,
            turnout_out_of_order = h.turnout_out_of_order + EXCLUDED.turnout_out_of_order,
            travel_seconds = h.travel_seconds || EXCLUDED.travel_seconds,
            travel_missing = h.travel_missing + EXCLUDED.travel_missing,
            travel_out_of_order = h.travel_out_of_order + EXCLUDED.travel_out_of_order,
            on_scene_seconds = h.on_scene_seconds || EXCLUDED.on_scene_seconds,
            on_scene_missing = h.on_scene_missing + EXCLUDED.on_scene_missing,
            on_scene_out_of_order = h.on_scene_out_of_order + EXCLUDED.on_scene_out_of_order,
            transport_seconds = h.transport_seconds || EXCLUDED.transport_seconds,
            transport_missing = h.transport_missing + EXCLUDED.transport_missing,
            transport_out_of_order = h.transport_out_of_order + EXCLUDED.transport_out_of_order,
            hospital_hold_seconds = h.hospital_hold_seconds || EXCLUDED.hospital_hold_seconds,
            hospital_hold_missing = h.hospital_hold_missing + EXCLUDED.hospital_hold_missing,
            hospital_hold_out_of_order = h.hospital_hold_out_of_order + EXCLUDED.hospital_hold_out_of_order,
            return_to_service_seconds = h.return_to_service_seconds || EXCLUDED.return_to_service_seconds,
            return_to_service_missing = h.return_to_service_missing + EXCLUDED.return_to_service_missing,
            return_to_service_out_of_order = h.return_to_service_out_of_order + EXCLUDED.return_to_service_out_of_order;
    ELSE
        UPDATE dispatch.unit_phase_hours AS h SET
            turnout_seconds = dispatch.seconds_without(h.turnout_seconds, r.turnout_seconds),
            turnout_missing = h.turnout_missing - (r.turnout_status = 'missing')::int,
            turnout_out_of_order = h.turnout_out_of_order - (r.turnout_status = 'out_of_order')::int,
            travel_seconds = dispatch.seconds_without(h.travel_seconds, r.travel_seconds),
            travel_missing = h.travel_missing - (r.travel_status = 'missing')::int,
            travel_out_of_order = h.travel_out_of_order - (r.travel_status = 'out_of_order')::int,
            on_scene_seconds = dispatch.seconds_without(h.on_scene_seconds, r.on_scene_seconds),
            on_scene_missing = h.on_scene_missing - (r.on_scene_status = 'missing')::int,
            on_scene_out_of_order = h.on_scene_out_of_order - (r.on_scene_status = 'out_of_order')::int,
            transport_seconds = dispatch.seconds_without(h.transport_seconds, r.transport_seconds),
            transport_missing = h.transport_missing - (r.transport_status = 'missing')::int,
            transport_out_of_order = h.transport_out_of_order - (r.transport_status = 'out_of_order')::int,
            hospital_hold_seconds = dispatch.seconds_without(h.hospital_hold_seconds, r.hospital_hold_seconds),
            hospital_hold_missing = h.hospital_hold_missing - (r.hospital_hold_status = 'missing')::int,
            hospital_hold_out_of_order = h.hospital_hold_out_of_order - (r.hospital_hold_status = 'out_of_order')::int,
            return_to_service_seconds = dispatch.seconds_without(h.return_to_service_seconds, r.return_to_service_seconds),
            return_to_service_missing = h.return_to_service_missing - (r.return_to_service_status = 'missing')::int,
            return_to_service_out_of_order = h.return_to_service_out_of_order - (r.return_to_service_status = 'out_of_order')::int
         WHERE h.hour = date_bin('1 hour', r.call_received_at, TIMESTAMPTZ '2000-01-01 00:00:00+00')
           AND h.priority = coalesce(r.priority, '');
        IF NOT FOUND THEN
            RAISE EXCEPTION 'dispatch.unit_phase_hours: no hour kept for the call received at %', r.call_received_at;
        END IF;
    END IF;
END $$;

-- Each change of a kept row, in the write's transaction (an update that moves no counted
-- phase, priority or call time changes nothing).
CREATE FUNCTION dispatch.incident_phases_to_hours() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM dispatch.incident_phase_hours_keep(NEW, 1);
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM dispatch.incident_phase_hours_keep(OLD, -1);
    ELSIF ROW(OLD.call_received_at, OLD.priority, OLD.call_taking_status, OLD.call_taking_seconds, OLD.regulation_status, OLD.regulation_seconds, OLD.activation_status, OLD.activation_seconds, OLD.response_status, OLD.response_seconds, OLD.total_status, OLD.total_seconds)
          IS DISTINCT FROM ROW(NEW.call_received_at, NEW.priority, NEW.call_taking_status, NEW.call_taking_seconds, NEW.regulation_status, NEW.regulation_seconds, NEW.activation_status, NEW.activation_seconds, NEW.response_status, NEW.response_seconds, NEW.total_status, NEW.total_seconds) THEN
        -- The two hours in key order, so two writes never wait on each other crosswise.
        IF (date_bin('1 hour', OLD.call_received_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), coalesce(OLD.priority, ''))
           <= (date_bin('1 hour', NEW.call_received_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), coalesce(NEW.priority, '')) THEN
            PERFORM dispatch.incident_phase_hours_keep(OLD, -1);
            PERFORM dispatch.incident_phase_hours_keep(NEW, 1);
        ELSE
            PERFORM dispatch.incident_phase_hours_keep(NEW, 1);
            PERFORM dispatch.incident_phase_hours_keep(OLD, -1);
        END IF;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER incident_phases_to_hours AFTER INSERT OR UPDATE OR DELETE ON dispatch.incident_phases
    FOR EACH ROW EXECUTE FUNCTION dispatch.incident_phases_to_hours();
CREATE FUNCTION dispatch.unit_phases_to_hours() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM dispatch.unit_phase_hours_keep(NEW, 1);
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM dispatch.unit_phase_hours_keep(OLD, -1);
    ELSIF ROW(OLD.call_received_at, OLD.priority, OLD.turnout_status, OLD.turnout_seconds, OLD.travel_status, OLD.travel_seconds, OLD.on_scene_status, OLD.on_scene_seconds, OLD.transport_status, OLD.transport_seconds, OLD.hospital_hold_status, OLD.hospital_hold_seconds, OLD.return_to_service_status, OLD.return_to_service_seconds)
          IS DISTINCT FROM ROW(NEW.call_received_at, NEW.priority, NEW.turnout_status, NEW.turnout_seconds, NEW.travel_status, NEW.travel_seconds, NEW.on_scene_status, NEW.on_scene_seconds, NEW.transport_status, NEW.transport_seconds, NEW.hospital_hold_status, NEW.hospital_hold_seconds, NEW.return_to_service_status, NEW.return_to_service_seconds) THEN
        -- The two hours in key order, so two writes never wait on each other crosswise.
        IF (date_bin('1 hour', OLD.call_received_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), coalesce(OLD.priority, ''))
           <= (date_bin('1 hour', NEW.call_received_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), coalesce(NEW.priority, '')) THEN
            PERFORM dispatch.unit_phase_hours_keep(OLD, -1);
            PERFORM dispatch.unit_phase_hours_keep(NEW, 1);
        ELSE
            PERFORM dispatch.unit_phase_hours_keep(NEW, 1);
            PERFORM dispatch.unit_phase_hours_keep(OLD, -1);
        END IF;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER unit_phases_to_hours AFTER INSERT OR UPDATE OR DELETE ON dispatch.unit_phases
    FOR EACH ROW EXECUTE FUNCTION dispatch.unit_phases_to_hours();

-- Every hour again from the kept phases, set-based: the backfill below, and
-- bench/scale/dispatch-grow.sql after it loads the phases with the triggers off.
CREATE FUNCTION dispatch.response_hours_rebuild() RETURNS void LANGUAGE sql AS $$
    DELETE FROM dispatch.incident_phase_hours;
    DELETE FROM dispatch.unit_phase_hours;
    INSERT INTO dispatch.incident_phase_hours (hour, priority, calls, call_taking_seconds, call_taking_missing, call_taking_out_of_order, regulation_seconds, regulation_missing, regulation_out_of_order, activation_seconds, activation_missing, activation_out_of_order, response_seconds, response_missing, response_out_of_order, total_seconds, total_missing, total_out_of_order)
    SELECT date_bin('1 hour', r.call_received_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'),
           coalesce(r.priority, ''),
           count(*),
           coalesce(array_agg(r.call_taking_seconds) FILTER (WHERE r.call_taking_seconds IS NOT NULL), '{}'),
           count(*) FILTER (WHERE r.call_taking_status = 'missing'),
           count(*) FILTER (WHERE r.call_taking_status = 'out_of_order'),
           coalesce(array_agg(r.regulation_seconds) FILTER (WHERE r.regulation_seconds IS NOT NULL), '{}'),
           count(*) FILTER (WHERE r.regulation_status = 'missing'),
           count(*) FILTER (WHERE r.regulation_status = 'out_of_order'),
           coalesce(array_agg(r.activation_seconds) FILTER (WHERE r.activation_seconds IS NOT NULL), '{}'),
           count(*) FILTER (WHERE r.activation_status = 'missing'),
           count(*) FILTER (WHERE r.activation_status = 'out_of_order'),
           coalesce(array_agg(r.response_seconds) FILTER (WHERE r.response_seconds IS NOT NULL), '{}'),
           count(*) FILTER (WHERE r.response_status = 'missing'),
           count(*) FILTER (WHERE r.response_status = 'out_of_order'),
           coalesce(array_agg(r.total_seconds) FILTER (WHERE r.total_seconds IS NOT NULL), '{}'),
           count(*) FILTER (WHERE r.total_status = 'missing'),
           count(*) FILTER (WHERE r.total_status = 'out_of_order')
      FROM dispatch.incident_phases r
     GROUP BY 1, 2;
    INSERT INTO dispatch.unit_phase_hours (hour, priority, turnout_seconds, turnout_missing, turnout_out_of_order, travel_seconds, travel_missing, travel_out_of_order, on_scene_seconds, on_scene_missing, on_scene_out_of_order, transport_seconds, transport_missing, transport_out_of_order, hospital_hold_seconds, hospital_hold_missing, hospital_hold_out_of_order, return_to_service_seconds, return_to_service_missing, return_to_service_out_of_order)
    SELECT date_bin('1 hour', r.call_received_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'),
           coalesce(r.priority, ''),
           coalesce(array_agg(r.turnout_seconds) FILTER (WHERE r.turnout_seconds IS NOT NULL), '{}'),
           count(*) FILTER (WHERE r.turnout_status = 'missing'),
           count(*) FILTER (WHERE r.turnout_status = 'out_of_order'),
           coalesce(array_agg(r.travel_seconds) FILTER (WHERE r.travel_seconds IS NOT NULL), '{}'),
           count(*) FILTER (WHERE r.travel_status = 'missing'),
           count(*) FILTER (WHERE r.travel_status = 'out_of_order'),
           coalesce(array_agg(r.on_scene_seconds) FILTER (WHERE r.on_scene_seconds IS NOT NULL), '{}'),
           count(*) FILTER (WHERE r.on_scene_status = 'missing'),
           count(*) FILTER (WHERE r.on_scene_status = 'out_of_order'),
           coalesce(array_agg(r.transport_seconds) FILTER (WHERE r.transport_seconds IS NOT NULL), '{}'),
           count(*) FILTER (WHERE r.transport_status = 'missing'),
           count(*) FILTER (WHERE r.transport_status = 'out_of_order'),
           coalesce(array_agg(r.hospital_hold_seconds) FILTER (WHERE r.hospital_hold_seconds IS NOT NULL), '{}'),
           count(*) FILTER (WHERE r.hospital_hold_status = 'missing'),
           count(*) FILTER (WHERE r.hospital_hold_status = 'out_of_order'),
           coalesce(array_agg(r.return_to_service_seconds) FILTER (WHERE r.return_to_service_seconds IS NOT NULL), '{}'),
           count(*) FILTER (WHERE r.return_to_service_status = 'missing'),
           count(*) FILTER (WHERE r.return_to_service_status = 'out_of_order')
      FROM dispatch.unit_phases r
     GROUP BY 1, 2;
$$;

-- Emptying the kept phases empties their hours.
CREATE FUNCTION dispatch.phases_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'incident_phases' THEN
        TRUNCATE dispatch.incident_phase_hours;
    ELSE
        TRUNCATE dispatch.unit_phase_hours;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER incident_phases_truncated AFTER TRUNCATE ON dispatch.incident_phases
    FOR EACH STATEMENT EXECUTE FUNCTION dispatch.phases_truncated();
CREATE TRIGGER unit_phases_truncated AFTER TRUNCATE ON dispatch.unit_phases
    FOR EACH STATEMENT EXECUTE FUNCTION dispatch.phases_truncated();

-- The incidents already recorded.
SELECT dispatch.response_hours_rebuild();
