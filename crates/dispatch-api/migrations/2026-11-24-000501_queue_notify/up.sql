-- Work queues (docs/dispatch-realtime.md, "Work queues"): every replica hears when an
-- incident enters or leaves a state, whichever path wrote it (a route, the seed, an
-- operator's SQL). One notice per incident and move, sent at commit, in commit order:
--   NOTIFY dispatch_queue, '<id>:<version>:<from>:<to>'   (<from> empty for a new incident)
-- The payload is a few dozen bytes, far below PostgreSQL's 8,000-byte limit.
CREATE FUNCTION notify_incident_queue() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(
        'dispatch_queue',
        NEW.id::text || ':' || NEW.version::text || ':'
            || CASE WHEN TG_OP = 'INSERT' THEN '' ELSE OLD.state END || ':' || NEW.state);
    RETURN NULL;
END $$;

CREATE TRIGGER incidents_queue_entered AFTER INSERT ON incidents
    FOR EACH ROW EXECUTE FUNCTION notify_incident_queue();
CREATE TRIGGER incidents_queue_moved AFTER UPDATE OF state ON incidents
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
    EXECUTE FUNCTION notify_incident_queue();
