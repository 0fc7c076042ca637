-- A prank call keeps its incident's number (numbers never change once given), so the
-- prank-call list of a number reads `prank_calls_phone_key` alone: its 20 newest entries and
-- the count of the rest, with no visit to incidents spread over the whole history
-- (bench/scale/README.md, "Every read route at 2 M on a quiet machine").
ALTER TABLE prank_calls ADD COLUMN incident_number TEXT;
UPDATE prank_calls p SET incident_number = i.number FROM incidents i WHERE i.id = p.incident_id;
ALTER TABLE prank_calls ALTER COLUMN incident_number SET NOT NULL;
DROP INDEX prank_calls_phone_key;
CREATE INDEX prank_calls_phone_key ON prank_calls (phone_key, recorded_at DESC, id DESC)
    INCLUDE (incident_id, incident_number);
