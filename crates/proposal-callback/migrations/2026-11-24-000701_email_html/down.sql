ALTER TABLE email_outbox DROP COLUMN html_body;
