-- Issue 4: idempotent POSTs, and the reference-data change notice every replica's catalogue
-- listens to. (The incident notice is sent by the writes themselves, inside their
-- transaction; the busy-unit index already exists: dispatches_unit_busy.)

-- A POST's response, kept so a retry with the same key answers the same without acting
-- twice. Written in the write's own transaction. Kept 24 hours (pruned on write).
CREATE TABLE idempotency_keys (
    user_id       BIGINT NOT NULL REFERENCES users (id),
    key           TEXT NOT NULL,
    route         TEXT NOT NULL,
    request_hash  TEXT NOT NULL,
    status        SMALLINT NOT NULL,
    body          JSONB NOT NULL,
    location      TEXT,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE FUNCTION notify_reference_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('dispatch_reference', TG_TABLE_NAME);
    RETURN NULL;
END $$;
CREATE TRIGGER health_units_changed AFTER INSERT OR UPDATE OR DELETE ON health_units
    FOR EACH STATEMENT EXECUTE FUNCTION notify_reference_changed();
CREATE TRIGGER mobile_unit_types_changed AFTER INSERT OR UPDATE OR DELETE ON mobile_unit_types
    FOR EACH STATEMENT EXECUTE FUNCTION notify_reference_changed();
CREATE TRIGGER professional_types_changed AFTER INSERT OR UPDATE OR DELETE ON professional_types
    FOR EACH STATEMENT EXECUTE FUNCTION notify_reference_changed();
CREATE TRIGGER technical_decision_actions_changed AFTER INSERT OR UPDATE OR DELETE
    ON technical_decision_actions
    FOR EACH STATEMENT EXECUTE FUNCTION notify_reference_changed();
CREATE TRIGGER intercurrences_changed AFTER INSERT OR UPDATE OR DELETE ON intercurrences
    FOR EACH STATEMENT EXECUTE FUNCTION notify_reference_changed();
