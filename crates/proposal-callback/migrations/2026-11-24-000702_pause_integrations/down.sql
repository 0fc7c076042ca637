DROP INDEX email_outbox_proposal;
DROP INDEX callback_receipts_tenant_proposal;
DROP INDEX callback_receipts_deferred;
UPDATE callback_receipts SET status = 'received' WHERE status = 'deferred';
ALTER TABLE callback_receipts DROP CONSTRAINT callback_receipts_status_check;
ALTER TABLE callback_receipts ADD CONSTRAINT callback_receipts_status_check
    CHECK (status IN ('received', 'processed', 'duplicate', 'unchanged', 'stale', 'ignored', 'failed'));
ALTER TABLE integrations DROP COLUMN paused_at;
