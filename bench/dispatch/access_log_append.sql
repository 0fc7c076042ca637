-- The access log's share of GET /incident/{id}: the service appends the reads' entries in
-- batches, one INSERT per batch; with its linger (docs/dispatch-access-log.md, "Batches") a
-- batch under this load carries about 500 entries (bench/access_log/README.md). run.sh sets
-- :batch (LOG_BATCH) and runs this once per :batch detail reads (pgbench's script weights),
-- so both sides do the same work.
\set id random(1, 3000)
INSERT INTO patient_access_log (incident_id, user_id, route, at)
SELECT :id, 3, 'GET /incident/{id}', now() FROM generate_series(1, :batch);
