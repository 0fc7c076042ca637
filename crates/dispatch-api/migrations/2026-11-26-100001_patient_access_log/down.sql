DROP TABLE dispatch.patient_access_log;
DROP FUNCTION dispatch.patient_access_log_append_only();
