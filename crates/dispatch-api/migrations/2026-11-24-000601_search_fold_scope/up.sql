-- Search folding and the bounded incident search (docs/dispatch-routes.md, "Search" and
-- "Incident search").
--
-- 1. `search_key()` folds as `search::fold` does in Rust, character for character: NFKD
--    (so "Sa" + U+0303 + "o", "ﬁ", fullwidth letters fold like "São", "fi", "a"), the
--    combining marks of five blocks removed, lower case (ICU's root rules, whatever the
--    database's locale), then the letters Unicode does not decompose spelt out. It no longer
--    uses `unaccent`, whose rules the Rust side could not follow exactly.
CREATE OR REPLACE FUNCTION search_key(text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT replace(replace(replace(replace(translate(
                   lower(regexp_replace(normalize($1, NFKD),
                                        '[\u0300-\u036F\u1AB0-\u1AFF\u1DC0-\u1DFF\u20D0-\u20FF\uFE20-\uFE2F]',
                                        '', 'g') COLLATE "und-x-icu"),
                   'øłđðħıŧς', 'olddhitσ'),
               'ß', 'ss'), 'æ', 'ae'), 'œ', 'oe'), 'þ', 'th') $$;

-- Everything computed with the old fold, computed again.
DROP INDEX users_search, users_name_order, health_units_search;
CREATE INDEX users_search ON users USING gin (search_key(descriptive_name) gin_trgm_ops);
CREATE INDEX users_name_order ON users (search_order(descriptive_name), id);
CREATE INDEX health_units_search ON health_units USING gin (search_key(name) gin_trgm_ops);

ALTER TABLE incidents DROP COLUMN search_text;
ALTER TABLE incidents ADD COLUMN search_text TEXT GENERATED ALWAYS AS (dispatch.search_key(
    number || ' ' || caller_name || ' ' || coalesce(patient_name, '')
    || ' ' || caller_phone || ' ' || regexp_replace(caller_phone, '\D', '', 'g')
    || ' ' || address)) STORED;
CREATE INDEX incidents_search ON incidents USING gin (search_text gin_trgm_ops);

-- 2. Phone terms match the digits of the caller's phone, by prefix or whole, at any age.
CREATE FUNCTION digits_of(text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT regexp_replace($1, '\D', '', 'g') $$;
CREATE INDEX incidents_phone_digits ON incidents (digits_of(caller_phone) text_pattern_ops, created_at);

-- 3. The default scope's older part: open incidents created before the recent window, newest
--    first (few rows: a centre has a few hundred open incidents whatever its history).
CREATE INDEX incidents_open ON incidents (created_at DESC, id DESC)
    WHERE state IN ('registering', 'awaiting_regulation', 'regulated', 'dispatched');

-- 4. `mine=true`: the incidents of a regulator or assignee, newest first.
CREATE INDEX incidents_regulator ON incidents (regulator_id, created_at DESC);
CREATE INDEX incidents_assignee ON incidents (assigned_to_id, created_at DESC);
