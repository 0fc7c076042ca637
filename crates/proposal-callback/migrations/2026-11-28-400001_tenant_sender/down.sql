ALTER TABLE email_outbox DROP COLUMN from_name, DROP COLUMN from_address, DROP COLUMN reply_to;
ALTER TABLE tenants DROP CONSTRAINT tenants_from_name_needs_an_address;
ALTER TABLE tenants DROP COLUMN from_name, DROP COLUMN from_address, DROP COLUMN reply_to;
