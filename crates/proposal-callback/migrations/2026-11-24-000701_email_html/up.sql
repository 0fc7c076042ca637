-- The emails are sent as text and HTML alternatives (docs/proposal-callback.md, "Email"):
-- `body` keeps the text part, `html_body` the HTML part. Rows queued before have none and
-- are sent as text only.
ALTER TABLE email_outbox ADD COLUMN html_body TEXT;
