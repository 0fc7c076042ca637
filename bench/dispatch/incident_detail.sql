-- The SQL GET /incident/{id} runs, as diesel sends it (prepared): the incident with its
-- creator, regulator and assignee. (The caller's own row comes from the user cache, which
-- the server keeps while its change listener runs.)
\set id random(1, 3000)
SELECT incidents.id, incidents.number, incidents.state, incidents.version, incidents.created_at,
       incidents.updated_at, incidents.caller_name, incidents.caller_phone, incidents.address,
       incidents.city, incidents.complaint, incidents.related_incident_id,
       incidents.occurrence_type, incidents.priority, incidents.occurrence_notes,
       incidents.patient_name, incidents.patient_age, incidents.patient_sex,
       incidents.regulated_at, incidents.conclusion, incidents.closed_at,
       users.id, users.descriptive_name, r.id, r.descriptive_name, a.id, a.descriptive_name
  FROM incidents
 INNER JOIN users ON users.id = incidents.created_by
  LEFT JOIN users r ON incidents.regulator_id = r.id
  LEFT JOIN users a ON incidents.assigned_to_id = a.id
 WHERE incidents.id = :id LIMIT 1;
