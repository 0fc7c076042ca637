DROP TABLE email_outbox;
DROP TABLE proposal_events;
DROP TABLE integration_history;
DROP TABLE applied_callbacks;
DROP TABLE callback_receipts;
DROP TABLE proposals;
DROP TABLE tokens;
DROP TABLE integrations;
