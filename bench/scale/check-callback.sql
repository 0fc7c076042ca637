-- Invariants of proposal-callback's data that the generated data must keep. The file prints
-- one row per broken invariant (its name, how many rows break it, an example id and detail),
-- so nothing when all hold. No LIMIT in the checks (see check-dispatch.sql). Run at the end
-- of bench/scale/build-callback.sh:
--
--   psql -X -At -f bench/scale/check-callback.sql "$DATABASE_URL"
\set ON_ERROR_STOP on
SET search_path TO proposal, public;
SET work_mem = '256MB';

-- Proposals: the status is the last accepted transition's, in_queue follows the status.
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (WITH last AS (
    SELECT DISTINCT ON (proposal_id) proposal_id, to_status FROM integration_history
     ORDER BY proposal_id, id DESC)
 SELECT 'status is the last transition''s', p.id, p.status || ' / ' || coalesce(l.to_status, '-')
   FROM proposals p LEFT JOIN last l ON l.proposal_id = p.id
  WHERE p.status <> coalesce(l.to_status, 'under_analysis')
     OR p.in_queue <> (p.status IN ('under_analysis', 'pending')) OR p.updated_at < p.created_at
) v(c, id, x) GROUP BY c;
-- History: each transition starts where the previous one ended and is an allowed one.
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'history is a chain of allowed transitions', h.proposal_id, h.from_status || ' -> ' || h.to_status
   FROM (SELECT proposal_id, from_status, to_status,
                lag(to_status) OVER (PARTITION BY proposal_id ORDER BY id) AS prev
           FROM integration_history) h
  WHERE h.from_status <> coalesce(h.prev, 'under_analysis')
     OR (h.from_status, h.to_status) NOT IN (
         ('under_analysis', 'pending'), ('under_analysis', 'approved'), ('under_analysis', 'refused'),
         ('pending', 'approved'), ('pending', 'refused'), ('pending', 'under_analysis'))
) v(c, id, x) GROUP BY c;

-- Receipts: the outcome columns match the status.
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'receipt outcome columns', id, status FROM callback_receipts
  WHERE (status IN ('processed', 'duplicate', 'unchanged'))
            <> (http_status = 200 AND dedup_key IS NOT NULL AND proposal_id IS NOT NULL
                AND error_code IS NULL)
     OR (status = 'failed') <> (http_status >= 400 AND error_code IS NOT NULL)
     OR status = 'received' OR processed_at < received_at OR attempts <> 1
) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'body_sha256 is the body''s', id, insurer FROM callback_receipts
  WHERE body_sha256 <> sha256(body)
     OR (insurer = 'too' AND dedup_key <> 'sha256:' || encode(body_sha256, 'hex'))
     OR (insurer <> 'too' AND dedup_key NOT LIKE 'event:%')
) v(c, id, x) GROUP BY c;
-- What each outcome wrote: processed = key, history, email, events; unchanged = key and one
-- event; duplicate = nothing but a key applied by an earlier receipt; failed = nothing.
-- (receipt_id has no index in these tables: counted by aggregates, not per receipt)
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (WITH a AS (SELECT receipt_id, count(*) AS n FROM applied_callbacks GROUP BY 1),
      h AS (SELECT receipt_id, count(*) AS n FROM integration_history GROUP BY 1),
      e AS (SELECT receipt_id, count(*) AS n FROM proposal_events GROUP BY 1),
 per AS (
    SELECT r.id, r.status, coalesce(a.n, 0) AS applied, coalesce(h.n, 0) AS history,
           coalesce(e.n, 0) AS events
      FROM callback_receipts r
      LEFT JOIN a ON a.receipt_id = r.id
      LEFT JOIN h ON h.receipt_id = r.id
      LEFT JOIN e ON e.receipt_id = r.id)
 SELECT 'rows written per outcome', id, format('%s: applied %s, history %s, events %s',
                                               status, applied, history, events)
   FROM per
  WHERE (status = 'processed' AND (applied <> 1 OR history <> 1 OR events NOT IN (3, 4)))
     OR (status = 'unchanged' AND (applied <> 1 OR history <> 0 OR events <> 1))
     OR (status IN ('duplicate', 'failed') AND (applied + history + events) <> 0)
) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'duplicate of an earlier applied key', r.id, r.dedup_key FROM callback_receipts r
   LEFT JOIN applied_callbacks a
     ON (a.tenant_id, a.insurer, a.dedup_key) = (r.tenant_id, r.insurer, r.dedup_key)
  WHERE r.status = 'duplicate' AND (a.receipt_id IS NULL OR a.receipt_id >= r.id)) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'applied key is its receipt''s, on its proposal', a.receipt_id, a.dedup_key
   FROM applied_callbacks a
   JOIN callback_receipts r ON r.id = a.receipt_id
   JOIN proposals p ON p.id = a.proposal_id
  WHERE a.dedup_key <> r.dedup_key OR a.tenant_id <> r.tenant_id OR a.insurer <> r.insurer
     OR p.tenant_id <> r.tenant_id OR p.proposal_id <> r.proposal_id) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'applied status is the transition''s', h.id, a.status || ' / ' || h.to_status
   FROM integration_history h JOIN applied_callbacks a ON a.receipt_id = h.receipt_id
  WHERE a.status <> h.to_status OR a.proposal_id <> h.proposal_id) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'events of a transition', h.id, string_agg(e.kind, ',' ORDER BY e.id)
   FROM integration_history h JOIN proposal_events e ON e.receipt_id = h.receipt_id
  GROUP BY h.id, h.from_status, h.to_status
 HAVING string_agg(e.kind, ',' ORDER BY e.id) <> CASE
        WHEN h.from_status IN ('under_analysis', 'pending') AND h.to_status IN ('approved', 'refused')
        THEN 'callback_received,status_changed,left_queue,email_queued'
        ELSE 'callback_received,status_changed,email_queued' END
) v(c, id, x) GROUP BY c;
-- Email: one per transition, to the proposal's contact, sent unless recent.
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'one email per transition', h.id, coalesce(o.status, 'none') FROM integration_history h
   LEFT JOIN email_outbox o ON o.history_id = h.id
   JOIN proposals p ON p.id = h.proposal_id
  WHERE o.id IS NULL OR o.proposal_id <> h.proposal_id OR o.recipient <> p.contact_email
     OR (o.status = 'sent') <> (o.sent_at IS NOT NULL)) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'email_queued event names its email', e.id, e.data::text FROM proposal_events e
   JOIN integration_history h ON h.receipt_id = e.receipt_id
   JOIN email_outbox o ON o.history_id = h.id
  WHERE e.kind = 'email_queued' AND (e.data ->> 'email_id')::bigint <> o.id) v(c, id, x) GROUP BY c;

-- The rebuilt constraints and indexes are all there and valid.
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'constraint not validated', NULL::bigint, conname::text FROM pg_constraint
  WHERE connamespace = 'proposal'::regnamespace AND NOT convalidated) v(c, id, x) GROUP BY c;
SELECT c AS "check", count(*) AS violations, min(id) AS "an id", min(x) AS "a detail" FROM (SELECT 'a secondary index is missing or invalid', NULL::bigint, name FROM (VALUES
    ('proposals_tenant_id_proposal_id_key'), ('callback_receipts_tenant_status'),
    ('callback_receipts_received_at'), ('integration_history_proposal'),
    ('proposal_events_proposal'), ('email_outbox_history_id_key'), ('email_outbox_due')) AS v(name)
  LEFT JOIN pg_index x ON x.indexrelid = to_regclass('proposal.' || name)
  WHERE x.indexrelid IS NULL OR NOT x.indisvalid) v(c, id, x) GROUP BY c;
