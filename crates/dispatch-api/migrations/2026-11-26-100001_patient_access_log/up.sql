-- Access log (docs/dispatch-access-log.md): who read which incident's patient data, through
-- which route, and when. Append-only: rows are inserted in batches by the service's writer
-- (`access_log`) and removed only by the retention (rows older than ACCESS_LOG_RETENTION);
-- an UPDATE is refused by the trigger below, whoever runs it.
CREATE TABLE dispatch.patient_access_log (
    id BIGSERIAL PRIMARY KEY,
    incident_id BIGINT NOT NULL REFERENCES dispatch.incidents (id),
    user_id BIGINT NOT NULL REFERENCES dispatch.users (id),
    route TEXT NOT NULL,
    at TIMESTAMPTZ NOT NULL
);
-- GET /incident/{id}/access-log and GET /user/{id}/access-log?from=&to=, oldest first.
CREATE INDEX patient_access_log_incident ON dispatch.patient_access_log (incident_id, at, id);
CREATE INDEX patient_access_log_user ON dispatch.patient_access_log (user_id, at, id);
-- The retention's DELETE.
CREATE INDEX patient_access_log_at ON dispatch.patient_access_log (at);

CREATE FUNCTION dispatch.patient_access_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'patient_access_log is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE TRIGGER patient_access_log_no_update BEFORE UPDATE OR TRUNCATE
    ON dispatch.patient_access_log
    FOR EACH STATEMENT EXECUTE FUNCTION dispatch.patient_access_log_append_only();
