-- Access log (docs/dispatch-access-log.md, "Consistency without foreign keys"): the two
-- foreign keys cost half of every batch's time in the database (each appended row looked its
-- incident and its user up and locked them FOR KEY SHARE, which also wrote to the incidents'
-- pages on every read). Nothing they checked can be wrong when the row is appended: a route
-- records its read only after it has loaded the incident, and the user is the authenticated
-- caller. What they also guarded, that an incident or a user the log names is never deleted
-- (or renumbered), the triggers below keep, at the cost of the rare delete instead of every read.
ALTER TABLE dispatch.patient_access_log
    DROP CONSTRAINT patient_access_log_incident_id_fkey,
    DROP CONSTRAINT patient_access_log_user_id_fkey;

CREATE FUNCTION dispatch.patient_access_log_keep_incident() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (TG_OP = 'DELETE' OR NEW.id <> OLD.id) AND EXISTS (
        SELECT 1 FROM dispatch.patient_access_log WHERE incident_id = OLD.id
    ) THEN
        RAISE EXCEPTION 'incident % is named by patient_access_log: % refused', OLD.id, TG_OP
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END $$;

CREATE FUNCTION dispatch.patient_access_log_keep_user() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (TG_OP = 'DELETE' OR NEW.id <> OLD.id) AND EXISTS (
        SELECT 1 FROM dispatch.patient_access_log WHERE user_id = OLD.id
    ) THEN
        RAISE EXCEPTION 'user % is named by patient_access_log: % refused', OLD.id, TG_OP
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END $$;

CREATE TRIGGER patient_access_log_keep_incident BEFORE DELETE OR UPDATE OF id
    ON dispatch.incidents
    FOR EACH ROW EXECUTE FUNCTION dispatch.patient_access_log_keep_incident();

CREATE TRIGGER patient_access_log_keep_user BEFORE DELETE OR UPDATE OF id
    ON dispatch.users
    FOR EACH ROW EXECUTE FUNCTION dispatch.patient_access_log_keep_user();
