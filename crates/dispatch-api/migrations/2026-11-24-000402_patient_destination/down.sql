ALTER TABLE incidents DROP COLUMN destination_health_unit_id;
