DROP INDEX callback_receipts_integration_received;
DROP TABLE integration_silences;
DELETE FROM email_outbox WHERE proposal_id IS NULL;
ALTER TABLE email_outbox DROP CONSTRAINT email_outbox_proposal_and_history;
ALTER TABLE email_outbox ALTER COLUMN history_id SET NOT NULL;
ALTER TABLE email_outbox ALTER COLUMN proposal_id SET NOT NULL;
ALTER TABLE tenants DROP COLUMN operator_email;
