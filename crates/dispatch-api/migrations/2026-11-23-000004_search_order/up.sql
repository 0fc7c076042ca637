-- Name order that does not depend on the database's locale: the folded name's UTF-8 bytes.
-- (Under en_US "Envio de USA" sorts after "Envio de motolância", under C before it; the
-- in-memory lists sort by the same bytes, so SQL and memory agree on every server.)
CREATE FUNCTION search_order(text) RETURNS bytea
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT convert_to(search_key($1), 'UTF8') $$;

DROP INDEX users_name_order;
CREATE INDEX users_name_order ON users (search_order(descriptive_name), id);
