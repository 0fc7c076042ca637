DROP TABLE offload_alerts;
DROP TABLE response_targets;
DROP INDEX dispatches_at_door, dispatches_arrived;
UPDATE dispatches SET status = 'at_destination' WHERE status = 'handed_over';
ALTER TABLE dispatches DROP CONSTRAINT dispatches_status_check;
ALTER TABLE dispatches ADD CONSTRAINT dispatches_status_check CHECK (status IN
    ('assigned', 'en_route', 'on_scene', 'transporting', 'at_destination', 'released'));
ALTER TABLE dispatches DROP COLUMN handed_over_at;
DROP INDEX incidents_call_received;
ALTER TABLE incidents DROP COLUMN call_received_at, DROP COLUMN submitted_at;
