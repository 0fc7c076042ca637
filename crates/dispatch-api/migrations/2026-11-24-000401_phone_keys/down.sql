DROP INDEX prank_calls_phone_key;
ALTER TABLE prank_calls
    ADD COLUMN phone_digits TEXT GENERATED ALWAYS AS (regexp_replace(phone, '\D', '', 'g')) STORED;
CREATE INDEX prank_calls_phone ON prank_calls (phone_digits, recorded_at DESC);
ALTER TABLE prank_calls DROP COLUMN phone_key;

DROP INDEX incidents_caller_phone_key;
CREATE INDEX incidents_caller_phone ON incidents (caller_phone);
ALTER TABLE incidents DROP COLUMN caller_phone_key;
