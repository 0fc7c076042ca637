UPDATE dispatch.technical_decisions SET notes = '' WHERE notes IS NULL;
ALTER TABLE dispatch.technical_decisions
    ALTER COLUMN notes SET DEFAULT '',
    ALTER COLUMN notes SET NOT NULL;

UPDATE dispatch.incident_intercurrences SET notes = '' WHERE notes IS NULL;
ALTER TABLE dispatch.incident_intercurrences
    ALTER COLUMN notes SET DEFAULT '',
    ALTER COLUMN notes SET NOT NULL;
