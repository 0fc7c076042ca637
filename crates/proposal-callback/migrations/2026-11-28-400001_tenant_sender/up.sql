-- Each tenant's own sender (docs/proposal-callback.md, "Email"): the From name and address of
-- its customers' emails, and a Reply-To only when the tenant sets one. Null: the process's
-- EMAIL_FROM (the fallback). The service validates the values; the checks keep the shape.
ALTER TABLE tenants
    ADD COLUMN from_name TEXT CHECK (from_name <> '' AND from_name !~ '[[:cntrl:]]'),
    ADD COLUMN from_address TEXT CHECK (from_address ~ '^[^@[:space:]]+@[^@[:space:]]+$'),
    ADD COLUMN reply_to TEXT CHECK (reply_to ~ '^[^@[:space:]]+@[^@[:space:]]+$'),
    -- A name says whose address: no name without an address.
    ADD CONSTRAINT tenants_from_name_needs_an_address
        CHECK (from_name IS NULL OR from_address IS NOT NULL);

-- The sender is fixed when the email is queued: a queued email keeps the sender it was
-- written with, whatever the tenant sets later. Null (emails queued before, and tenants
-- without a sender of their own): EMAIL_FROM, read when it is sent.
ALTER TABLE email_outbox
    ADD COLUMN from_name TEXT,
    ADD COLUMN from_address TEXT,
    ADD COLUMN reply_to TEXT;
