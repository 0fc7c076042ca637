DROP INDEX callback_receipts_left_received;
-- The older schema knows neither outcome; both changed nothing, as `unchanged` did.
UPDATE callback_receipts SET status = 'unchanged' WHERE status IN ('stale', 'ignored');
ALTER TABLE callback_receipts DROP CONSTRAINT callback_receipts_status_check;
ALTER TABLE callback_receipts ADD CONSTRAINT callback_receipts_status_check
    CHECK (status IN ('received', 'processed', 'duplicate', 'unchanged', 'failed'));
ALTER TABLE proposals DROP COLUMN last_event_at;
ALTER TABLE callback_receipts DROP COLUMN event_at;
