-- The access log's share of GET /incident/{id}: the service appends the reads' entries in
-- batches of about 50 (bench/access_log/README.md), one INSERT per batch. Run by
-- pgbench once per 50 detail reads (weights 50 and 1), so both sides do the same work.
\set id random(1, 3000)
INSERT INTO patient_access_log (incident_id, user_id, route, at)
SELECT :id, 3, 'GET /incident/{id}', now() FROM generate_series(1, 50);
