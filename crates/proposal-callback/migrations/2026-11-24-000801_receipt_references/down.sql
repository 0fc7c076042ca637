DROP INDEX proposal_events_receipt;
DROP INDEX integration_history_receipt;
DROP INDEX applied_callbacks_receipt;
