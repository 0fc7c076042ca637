DROP INDEX integration_history_one_per_receipt;
CREATE INDEX integration_history_receipt ON integration_history (receipt_id) WHERE receipt_id IS NOT NULL;
ALTER TABLE email_outbox RENAME CONSTRAINT email_outbox_one_per_transition
    TO email_outbox_history_id_key;
ALTER TABLE email_outbox DROP CONSTRAINT email_outbox_message_id_unique;
ALTER TABLE email_outbox DROP COLUMN message_id;
DROP INDEX email_outbox_failed;
ALTER TABLE email_outbox DROP CONSTRAINT email_outbox_failed_at;
ALTER TABLE email_outbox DROP COLUMN failed_at;
-- The older schema retries every email: a refused one goes back to the queue.
UPDATE email_outbox SET status = 'queued' WHERE status = 'failed';
ALTER TABLE email_outbox DROP CONSTRAINT email_outbox_status_check;
ALTER TABLE email_outbox ADD CONSTRAINT email_outbox_status_check
    CHECK (status IN ('queued', 'sent'));
