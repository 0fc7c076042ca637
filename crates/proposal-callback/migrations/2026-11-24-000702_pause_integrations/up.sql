-- Pausing an integration (docs/proposal-callback.md, "Pause and resume"): while `paused_at` is
-- set, its callbacks are stored as `deferred` receipts and answered 202; resuming applies them
-- in arrival order and then clears it.
ALTER TABLE integrations ADD COLUMN paused_at TIMESTAMPTZ;

ALTER TABLE callback_receipts DROP CONSTRAINT callback_receipts_status_check;
ALTER TABLE callback_receipts ADD CONSTRAINT callback_receipts_status_check
    CHECK (status IN ('received', 'deferred', 'processed', 'duplicate', 'unchanged', 'stale',
                      'ignored', 'failed'));

-- A resume takes the integration's deferred receipts oldest first.
CREATE INDEX callback_receipts_deferred ON callback_receipts (integration_id, id)
    WHERE status = 'deferred';
-- The operators' views: a proposal's receipts, a tenant's receipts by insurer.
CREATE INDEX callback_receipts_tenant_proposal ON callback_receipts (tenant_id, proposal_id, id);
CREATE INDEX email_outbox_proposal ON email_outbox (proposal_id, id);
