-- Access log (docs/dispatch-access-log.md, "How it is stored"): a row per batch the writer
-- commits, its entries as four arrays of the same length, in the order they were handed to
-- the writer. A row per entry cost PostgreSQL a heap row and four B-tree entries per read
-- (17-22 µs of CPU per entry in batches of 32, bench/access_log/statement.sh); a row per
-- batch costs one heap row, one B-tree entry and one GIN pending entry per distinct
-- incident and user (6-8 µs). The entries are read back through the view below.
CREATE TABLE dispatch.patient_access_batches (
    id BIGSERIAL PRIMARY KEY,
    -- The earliest and the latest of `ats`: the user listing's range and the retention.
    first_at TIMESTAMPTZ NOT NULL,
    last_at TIMESTAMPTZ NOT NULL,
    incident_ids BIGINT[] NOT NULL,
    user_ids BIGINT[] NOT NULL,
    routes TEXT[] NOT NULL,
    ats TIMESTAMPTZ[] NOT NULL,
    CONSTRAINT patient_access_batches_entries CHECK (
        array_ndims(incident_ids) = 1
        AND cardinality(incident_ids) BETWEEN 1 AND 1000
        AND cardinality(user_ids) = cardinality(incident_ids)
        AND cardinality(routes) = cardinality(incident_ids)
        AND cardinality(ats) = cardinality(incident_ids)
        AND array_position(incident_ids, NULL) IS NULL
        AND array_position(user_ids, NULL) IS NULL
        AND array_position(routes, NULL) IS NULL
        AND array_position(ats, NULL) IS NULL
        AND first_at <= last_at
    )
);
-- GET /incident/{id}/access-log and GET /user/{id}/access-log?from=&to=.
CREATE INDEX patient_access_batches_incidents ON dispatch.patient_access_batches USING gin (incident_ids);
CREATE INDEX patient_access_batches_users ON dispatch.patient_access_batches USING gin (user_ids);
-- The retention's DELETE and the user listing's range.
CREATE INDEX patient_access_batches_last_at ON dispatch.patient_access_batches (last_at);

-- The entries written so far, a batch per transaction that wrote them (at most 1,000 each).
INSERT INTO dispatch.patient_access_batches (first_at, last_at, incident_ids, user_ids, routes, ats)
SELECT min(at), max(at),
       array_agg(incident_id ORDER BY at, id), array_agg(user_id ORDER BY at, id),
       array_agg(route ORDER BY at, id), array_agg(at ORDER BY at, id)
  FROM (SELECT l.*, xmin::text AS tx,
               (row_number() OVER (PARTITION BY xmin::text ORDER BY at, id) - 1) / 1000 AS chunk
          FROM dispatch.patient_access_log l) e
 GROUP BY tx, chunk
 ORDER BY min(id);

DROP TABLE dispatch.patient_access_log;
DROP FUNCTION dispatch.patient_access_log_append_only();

-- One row per entry, in the log's order (at, then the batch, then the entry's place in it):
-- what auditors query, and what the service's listings read (through the indexes above).
CREATE VIEW dispatch.patient_access_log AS
SELECT b.id AS batch_id, e.position, e.incident_id, e.user_id, e.route, e.at
  FROM dispatch.patient_access_batches b
 CROSS JOIN LATERAL unnest(b.incident_ids, b.user_ids, b.routes, b.ats)
       WITH ORDINALITY AS e (incident_id, user_id, route, at, position);

-- Append-only, whoever writes: a batch is never changed, only removed whole by the retention.
CREATE FUNCTION dispatch.patient_access_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'patient_access_log is append-only: % refused', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE TRIGGER patient_access_batches_no_update BEFORE UPDATE OR TRUNCATE
    ON dispatch.patient_access_batches
    FOR EACH STATEMENT EXECUTE FUNCTION dispatch.patient_access_log_append_only();

CREATE TRIGGER patient_access_log_no_update INSTEAD OF UPDATE OR INSERT OR DELETE
    ON dispatch.patient_access_log
    FOR EACH ROW EXECUTE FUNCTION dispatch.patient_access_log_append_only();

-- An incident or a user the log names is never deleted or renumbered (docs/dispatch-access-log.md,
-- "Consistency without foreign keys"), now looked up through the GIN indexes.
CREATE OR REPLACE FUNCTION dispatch.patient_access_log_keep_incident() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (TG_OP = 'DELETE' OR NEW.id <> OLD.id) AND EXISTS (
        SELECT 1 FROM dispatch.patient_access_batches WHERE incident_ids @> ARRAY[OLD.id]
    ) THEN
        RAISE EXCEPTION 'incident % is named by patient_access_log: % refused', OLD.id, TG_OP
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END $$;

CREATE OR REPLACE FUNCTION dispatch.patient_access_log_keep_user() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (TG_OP = 'DELETE' OR NEW.id <> OLD.id) AND EXISTS (
        SELECT 1 FROM dispatch.patient_access_batches WHERE user_ids @> ARRAY[OLD.id]
    ) THEN
        RAISE EXCEPTION 'user % is named by patient_access_log: % refused', OLD.id, TG_OP
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END $$;
