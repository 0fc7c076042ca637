-- A technical decision or an intercurrence recorded without notes has none (NULL), not an
-- empty text (docs/changes.md, 2026-11-30): the reads answer `notes: null`, as the other
-- optional texts do. What was stored as '' (or blanks) becomes NULL.
ALTER TABLE dispatch.technical_decisions
    ALTER COLUMN notes DROP DEFAULT,
    ALTER COLUMN notes DROP NOT NULL;
UPDATE dispatch.technical_decisions SET notes = NULL WHERE btrim(notes) = '';

ALTER TABLE dispatch.incident_intercurrences
    ALTER COLUMN notes DROP DEFAULT,
    ALTER COLUMN notes DROP NOT NULL;
UPDATE dispatch.incident_intercurrences SET notes = NULL WHERE btrim(notes) = '';
