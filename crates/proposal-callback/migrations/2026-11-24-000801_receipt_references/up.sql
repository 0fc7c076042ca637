-- `prune` deletes old receipts; the three tables that point at a receipt set their reference
-- to NULL. Without an index on each reference, every deleted receipt made PostgreSQL scan
-- the three tables whole (bench/scale/README.md: 0.5 s per receipt at 1 M receipts). Partial:
-- only rows that still point at a receipt are indexed.
CREATE INDEX applied_callbacks_receipt ON applied_callbacks (receipt_id) WHERE receipt_id IS NOT NULL;
CREATE INDEX integration_history_receipt ON integration_history (receipt_id) WHERE receipt_id IS NOT NULL;
CREATE INDEX proposal_events_receipt ON proposal_events (receipt_id) WHERE receipt_id IS NOT NULL;
