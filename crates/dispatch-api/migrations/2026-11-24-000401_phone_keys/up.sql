-- One caller, one key: every spelling of a phone ("+55 12 99100-4321", "(12) 99100-4321",
-- "12991004321") is stored with the same key, the one `domain::phone::Phone::key` computes
-- with libphonenumber's rules (national digits for a Brazilian number, "+<country><digits>"
-- for any other). The service writes the key with every phone it stores; the prank-call
-- lookup and the regulation screen compare keys (docs/dispatch-routes.md, "Phone numbers").

-- The backfill of the rows already stored follows the same rule for the spellings a
-- Brazilian phone is written in: a leading `+55` or `55` (12 or 13 digits) is the country
-- code, a leading 0 of 11 or 12 digits is the trunk prefix.
CREATE FUNCTION phone_key_backfill(raw text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    AS $$
    SELECT CASE
        WHEN btrim(raw) LIKE '+%' AND d LIKE '55%' THEN substr(d, 3)
        WHEN btrim(raw) LIKE '+%' THEN '+' || d
        WHEN length(d) IN (12, 13) AND d LIKE '55%' THEN substr(d, 3)
        WHEN length(d) IN (11, 12) AND d LIKE '0%' THEN substr(d, 2)
        ELSE d
    END
    FROM (SELECT regexp_replace(raw, '\D', '', 'g') AS d) AS digits
    $$;

ALTER TABLE incidents ADD COLUMN caller_phone_key TEXT;
UPDATE incidents SET caller_phone_key = phone_key_backfill(caller_phone);
ALTER TABLE incidents ALTER COLUMN caller_phone_key SET NOT NULL;
DROP INDEX incidents_caller_phone;
CREATE INDEX incidents_caller_phone_key ON incidents (caller_phone_key);

ALTER TABLE prank_calls ADD COLUMN phone_key TEXT;
UPDATE prank_calls SET phone_key = phone_key_backfill(phone);
ALTER TABLE prank_calls ALTER COLUMN phone_key SET NOT NULL;
-- The digits-only column is replaced by the key: "+55 12 ..." and "(12) ..." now match.
DROP INDEX prank_calls_phone;
ALTER TABLE prank_calls DROP COLUMN phone_digits;
CREATE INDEX prank_calls_phone_key ON prank_calls (phone_key, recorded_at DESC);

DROP FUNCTION phone_key_backfill(text);
