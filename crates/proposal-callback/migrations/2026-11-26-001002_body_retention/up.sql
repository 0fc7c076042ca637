-- Retention of personal data in raw bodies (LGPD; docs/proposal-callback.md, "Retention of
-- raw bodies"). A callback's body names the tenant's customer (and the insurer's notes on
-- them); once a receipt has its outcome and is older than its tenant's `body_retention_days`,
-- its body is erased: emptied, with `body_erased_at` saying when. Everything else stays: the
-- outcome, the HTTP answer, the event time, the proposal it concerned, the headers kept, the
-- body's SHA-256 (a redelivery is still recognised) and every reference to the receipt.
ALTER TABLE tenants ADD COLUMN body_retention_days INT NOT NULL DEFAULT 90
    CHECK (body_retention_days BETWEEN 1 AND 3650);

ALTER TABLE callback_receipts ADD COLUMN body_erased_at TIMESTAMPTZ;
ALTER TABLE callback_receipts ADD CONSTRAINT callback_receipts_erased_body_is_empty
    CHECK (body_erased_at IS NULL OR octet_length(body) = 0);

-- The erasure walks a tenant's receipts that still hold their body, oldest first.
CREATE INDEX callback_receipts_body_kept ON callback_receipts (tenant_id, received_at, id)
    WHERE body_erased_at IS NULL;
