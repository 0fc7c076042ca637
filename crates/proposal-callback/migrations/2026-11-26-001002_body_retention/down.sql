DROP INDEX callback_receipts_body_kept;
ALTER TABLE callback_receipts DROP CONSTRAINT callback_receipts_erased_body_is_empty;
ALTER TABLE callback_receipts DROP COLUMN body_erased_at;
ALTER TABLE tenants DROP COLUMN body_retention_days;
