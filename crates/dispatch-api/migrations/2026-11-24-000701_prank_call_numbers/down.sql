DROP INDEX prank_calls_phone_key;
CREATE INDEX prank_calls_phone_key ON prank_calls (phone_key, recorded_at DESC);
ALTER TABLE prank_calls DROP COLUMN incident_number;
