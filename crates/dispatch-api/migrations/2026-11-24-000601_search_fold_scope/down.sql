DROP INDEX incidents_assignee, incidents_regulator, incidents_open, incidents_phone_digits;
DROP FUNCTION digits_of(text);

CREATE OR REPLACE FUNCTION search_key(text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, $1)) $$;

DROP INDEX users_search, users_name_order, health_units_search;
CREATE INDEX users_search ON users USING gin (search_key(descriptive_name) gin_trgm_ops);
CREATE INDEX users_name_order ON users (search_order(descriptive_name), id);
CREATE INDEX health_units_search ON health_units USING gin (search_key(name) gin_trgm_ops);

ALTER TABLE incidents DROP COLUMN search_text;
ALTER TABLE incidents ADD COLUMN search_text TEXT GENERATED ALWAYS AS (search_key(
    number || ' ' || caller_name || ' ' || coalesce(patient_name, '')
    || ' ' || caller_phone || ' ' || regexp_replace(caller_phone, '\D', '', 'g')
    || ' ' || address)) STORED;
CREATE INDEX incidents_search ON incidents USING gin (search_text gin_trgm_ops);
