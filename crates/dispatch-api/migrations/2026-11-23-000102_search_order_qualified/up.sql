-- `search_order()` called `search_key()` by its bare name, so a session whose search_path
-- lacks `dispatch` (psql by hand, ANALYZE, pg_restore, PostgreSQL 17's restricted path for
-- maintenance) failed while planning any query on `users`: the planner inlines the function
-- of the `users_name_order` index expression. pg_restore could not rebuild that index at
-- all. Naming the schema frees the function from the caller's path. Its results do not
-- change, so the index stays valid as it is.
CREATE OR REPLACE FUNCTION search_order(text) RETURNS bytea
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT convert_to(dispatch.search_key($1), 'UTF8') $$;
