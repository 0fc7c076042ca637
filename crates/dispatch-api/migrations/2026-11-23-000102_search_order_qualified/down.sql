CREATE OR REPLACE FUNCTION search_order(text) RETURNS bytea
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT convert_to(search_key($1), 'UTF8') $$;
