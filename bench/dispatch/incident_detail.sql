-- The SQL GET /incident/{id} runs, as diesel sends it (prepared): the incident with its
-- creator, regulator, assignee and destination. (The caller's own row comes from the user
-- cache, which the server keeps while its change listener runs.) The read's access log entry
-- is appended in batches: access_log_append.sql, run once per LOG_BATCH (500) of these.
\set id random(1, 3000)
SELECT incidents.id, incidents.number, incidents.state, incidents.version,
       incidents.call_received_at, incidents.created_at, incidents.updated_at,
       incidents.caller_name, incidents.caller_phone, incidents.address, incidents.complaint,
       incidents.city, incidents.related_incident_id, incidents.occurrence_type,
       incidents.priority, incidents.occurrence_notes, incidents.patient_name,
       incidents.patient_age, incidents.patient_sex, incidents.destination_health_unit_id,
       incidents.regulated_at, incidents.conclusion, incidents.closed_at,
       incidents.location_lat, incidents.location_lon,
       users.id, users.descriptive_name, r.id, r.descriptive_name, a.id, a.descriptive_name,
       health_units.id, health_units.name, health_units.city, health_units.uf
  FROM incidents
 INNER JOIN users ON users.id = incidents.created_by
  LEFT JOIN users r ON incidents.regulator_id = r.id
  LEFT JOIN users a ON incidents.assigned_to_id = a.id
  LEFT JOIN health_units ON incidents.destination_health_unit_id = health_units.id
 WHERE incidents.id = :id;
