ALTER TABLE tenants DROP COLUMN time_zone;
