DROP TRIGGER patient_access_log_keep_user ON dispatch.users;
DROP TRIGGER patient_access_log_keep_incident ON dispatch.incidents;
DROP FUNCTION dispatch.patient_access_log_keep_user();
DROP FUNCTION dispatch.patient_access_log_keep_incident();
ALTER TABLE dispatch.patient_access_log
    ADD CONSTRAINT patient_access_log_incident_id_fkey
        FOREIGN KEY (incident_id) REFERENCES dispatch.incidents (id),
    ADD CONSTRAINT patient_access_log_user_id_fkey
        FOREIGN KEY (user_id) REFERENCES dispatch.users (id);
