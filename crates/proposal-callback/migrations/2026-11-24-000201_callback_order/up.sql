-- Order of callbacks (docs/proposal-callback.md, "Order"): the insurer's event time of each
-- receipt, and of the last callback applied to each proposal. A callback older than that is
-- `stale`. Events that carry no analysis result are `ignored`.
ALTER TABLE callback_receipts ADD COLUMN event_at TIMESTAMPTZ;
ALTER TABLE proposals ADD COLUMN last_event_at TIMESTAMPTZ;

ALTER TABLE callback_receipts DROP CONSTRAINT callback_receipts_status_check;
ALTER TABLE callback_receipts ADD CONSTRAINT callback_receipts_status_check
    CHECK (status IN ('received', 'processed', 'duplicate', 'unchanged', 'stale', 'ignored', 'failed'));

-- The sweeper looks for receipts a crash left `received`.
CREATE INDEX callback_receipts_left_received ON callback_receipts (received_at, id)
    WHERE status = 'received';
