-- Mail that operators and inboxes can trust (docs/proposal-callback.md, "Email").
--
-- `failed`: the relay refused the email for good (a 5xx answer to its recipient or to its
-- content). The worker no longer tries it; an operator may send it again
-- (POST /admin/emails/{id}/retry), which puts it back in the queue. `failed_at` says when it
-- was refused, and is set exactly while the email is `failed`.
ALTER TABLE email_outbox DROP CONSTRAINT email_outbox_status_check;
ALTER TABLE email_outbox ADD CONSTRAINT email_outbox_status_check
    CHECK (status IN ('queued', 'sent', 'failed'));
ALTER TABLE email_outbox ADD COLUMN failed_at TIMESTAMPTZ;
ALTER TABLE email_outbox ADD CONSTRAINT email_outbox_failed_at
    CHECK ((status = 'failed') = (failed_at IS NOT NULL));
-- `/metrics` counts them every few seconds; only refused emails are in this index.
CREATE INDEX email_outbox_failed ON email_outbox (failed_at, id) WHERE status = 'failed';

-- The Message-ID header, `<uuid@domain of EMAIL_FROM>`: given at the email's first attempt
-- and kept for every later one (so a copy sent twice is recognisable), unique here and, by its
-- random UUID, across databases. Null until the first attempt (and for emails sent before).
ALTER TABLE email_outbox ADD COLUMN message_id TEXT;
ALTER TABLE email_outbox ADD CONSTRAINT email_outbox_message_id_unique UNIQUE (message_id);

-- One email per transition: the unique `history_id` has said so since the table was made;
-- named for what it guards, so the refusal reads as such.
ALTER TABLE email_outbox RENAME CONSTRAINT email_outbox_history_id_key
    TO email_outbox_one_per_transition;

-- One transition per callback: a receipt brings at most one accepted transition (its
-- redelivery key is claimed in the same transaction). The index that `prune` already used
-- for this reference becomes unique, so the rule costs no new index.
DROP INDEX integration_history_receipt;
CREATE UNIQUE INDEX integration_history_one_per_receipt ON integration_history (receipt_id)
    WHERE receipt_id IS NOT NULL;
