DROP TRIGGER incidents_queue_moved ON incidents;
DROP TRIGGER incidents_queue_entered ON incidents;
DROP FUNCTION notify_incident_queue();
