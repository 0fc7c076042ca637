-- The access log's share of GET /incident/{id}: the service appends the reads' entries in
-- batches, one row of arrays per batch (docs/dispatch-access-log.md, "How it is stored");
-- with its linger a batch under this load carries tens of entries (bench/access_log/README.md).
-- run.sh sets :batch (LOG_BATCH) and runs this once per :batch detail reads (pgbench's script
-- weights), so both sides do the same work.
\set id random(1, 3000)
INSERT INTO dispatch.patient_access_batches (first_at, last_at, incident_ids, user_ids, routes, ats)
SELECT now(), now(), array_fill(:id::int8, ARRAY[(:batch)::int]), array_fill(3::int8, ARRAY[(:batch)::int]),
       array_fill('GET /incident/{id}'::text, ARRAY[(:batch)::int]), array_fill(now(), ARRAY[(:batch)::int]);
