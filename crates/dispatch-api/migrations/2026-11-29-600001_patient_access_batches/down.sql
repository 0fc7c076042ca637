CREATE TABLE dispatch.patient_access_log_rows (
    id BIGSERIAL PRIMARY KEY,
    incident_id BIGINT NOT NULL,
    user_id BIGINT NOT NULL,
    route TEXT NOT NULL,
    at TIMESTAMPTZ NOT NULL
);
INSERT INTO dispatch.patient_access_log_rows (incident_id, user_id, route, at)
SELECT incident_id, user_id, route, at FROM dispatch.patient_access_log ORDER BY at, batch_id, position;

DROP VIEW dispatch.patient_access_log;
DROP TABLE dispatch.patient_access_batches;
DROP FUNCTION dispatch.patient_access_log_append_only();
ALTER TABLE dispatch.patient_access_log_rows RENAME TO patient_access_log;
ALTER SEQUENCE dispatch.patient_access_log_rows_id_seq RENAME TO patient_access_log_id_seq;
ALTER INDEX dispatch.patient_access_log_rows_pkey RENAME TO patient_access_log_pkey;
CREATE INDEX patient_access_log_incident ON dispatch.patient_access_log (incident_id, at, id);
CREATE INDEX patient_access_log_user ON dispatch.patient_access_log (user_id, at, id);
CREATE INDEX patient_access_log_at ON dispatch.patient_access_log (at);

CREATE FUNCTION dispatch.patient_access_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'patient_access_log is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER patient_access_log_no_update BEFORE UPDATE OR TRUNCATE
    ON dispatch.patient_access_log
    FOR EACH STATEMENT EXECUTE FUNCTION dispatch.patient_access_log_append_only();

CREATE OR REPLACE FUNCTION dispatch.patient_access_log_keep_incident() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (TG_OP = 'DELETE' OR NEW.id <> OLD.id) AND EXISTS (
        SELECT 1 FROM dispatch.patient_access_log WHERE incident_id = OLD.id
    ) THEN
        RAISE EXCEPTION 'incident % is named by patient_access_log: % refused', OLD.id, TG_OP
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END $$;

CREATE OR REPLACE FUNCTION dispatch.patient_access_log_keep_user() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (TG_OP = 'DELETE' OR NEW.id <> OLD.id) AND EXISTS (
        SELECT 1 FROM dispatch.patient_access_log WHERE user_id = OLD.id
    ) THEN
        RAISE EXCEPTION 'user % is named by patient_access_log: % refused', OLD.id, TG_OP
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END $$;
