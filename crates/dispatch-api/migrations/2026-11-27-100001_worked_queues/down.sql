DROP TABLE dispatch.occurrence_types;
DROP INDEX dispatch.incidents_queue;
DROP FUNCTION dispatch.priority_rank(text);
ALTER TABLE dispatch.incidents DROP COLUMN waiting_since;
