-- pgbench: the database work of one processed callback, as the service does it (same tables,
-- same rows, same two transactions: the receipt stored first, then the transition). Run
-- against the same schema, so this is the ceiling the service can approach.
\set n random(1, :nprop)
INSERT INTO callback_receipts (tenant_id, insurer, integration_id, headers, body, body_sha256)
  VALUES ('demo-a', 'porto', 1, '{"content-type": "application/json"}',
          convert_to('{"idProposta":"G-' || (:n)::text || '","situacao":"APROVADA"}', 'UTF8'),
          sha256(convert_to((:n)::text, 'UTF8')))
  RETURNING id AS rid \gset
BEGIN;
SELECT id AS pid, status AS st FROM proposals
  WHERE tenant_id = 'demo-a' AND proposal_id = 'G-' || (:n)::text FOR UPDATE \gset
INSERT INTO applied_callbacks (tenant_id, insurer, dedup_key, proposal_id, receipt_id, status)
  VALUES ('demo-a', 'porto', 'event-pgb-' || (:rid)::text, :pid, :rid, 'approved')
  ON CONFLICT DO NOTHING;
UPDATE proposals SET status = 'approved', in_queue = false, updated_at = now() WHERE id = :pid;
INSERT INTO integration_history (proposal_id, insurer, receipt_id, from_status, to_status,
                                 insurer_event_id, insurer_note, insurer_time)
  VALUES (:pid, 'porto', :rid, 'under_analysis', 'approved', 'pgb-' || (:rid)::text, NULL, now())
  RETURNING id AS hid \gset
INSERT INTO email_outbox (proposal_id, history_id, recipient, subject, body)
  VALUES (:pid, :hid, 'locatario@example.com', 'Proposal G: approved', 'Proposal G is now approved.')
  RETURNING id AS eid \gset
INSERT INTO proposal_events (proposal_id, kind, receipt_id, data) VALUES
  (:pid, 'callback_received', :rid, '{"insurer": "porto", "status": "approved"}'),
  (:pid, 'status_changed', :rid, '{"from": "under_analysis", "to": "approved"}'),
  (:pid, 'left_queue', :rid, '{"status": "approved"}'),
  (:pid, 'email_queued', :rid, '{}');
UPDATE callback_receipts SET status = 'processed', http_status = 200, proposal_id = 'G-' || (:n)::text,
  dedup_key = 'event-pgb-' || (:rid)::text, attempts = attempts + 1, processed_at = now()
  WHERE id = :rid;
COMMIT;
-- (No `:` inside string literals above: pgbench would take `:name` for a variable.)
