-- Grows a freshly seeded proposal-callback database (`proposal-callback migrate` + `seed`) to
-- :tenants tenants, :proposals proposals and :receipts callback receipts received over
-- 18 months up to :'anchor', with the rows the callback flow writes for each receipt. Run by
-- bench/scale/build-callback.sh (see bench/scale/README.md).
--
-- Shape, per proposal (tenant and insurer drawn per proposal; each tenant has a production
-- integration with every insurer):
-- * a path of transitions from under_analysis: approved; refused; pending then approved or
--   refused; pending, under_analysis again (Porto and Tokio only: Too has no such code) then
--   approved; pending for good. Steps come 2 hours to 5 days apart; steps that would lie
--   after the anchor have not happened yet, so recent proposals are still in the queue.
-- * each step: one `processed` receipt (applied_callbacks key, proposal updated,
--   integration_history, email_outbox, events callback_received, status_changed, left_queue
--   when it leaves the queue, email_queued), then 0-4 retries of the same body a few
--   minutes later (`duplicate`: receipt only).
-- * 40% get the final status again a day later with a new event (`unchanged`: key and a
--   callback_received event); 10% a stale `pending` two days after a final status
--   (`failed`, 409 invalid_transition: receipt only, the transaction rolled back).
-- * the rest up to :receipts: callbacks for proposals this service never had (`failed`,
--   404 proposal_not_found), spread over the whole period.
-- Bodies are each insurer's real format (tests/fixtures/insurers), their SHA-256 and dedup
-- keys as the service computes them (event id, or the body's SHA-256 for Too). Ids follow
-- time. Emails older than five minutes are sent.
\set ON_ERROR_STOP on
SET search_path TO proposal, public;
SET TIME ZONE 'UTC';
SET synchronous_commit = off;
SET work_mem = '256MB';
SET maintenance_work_mem = '1GB';
SET client_min_messages = warning;
\timing on

DROP SCHEMA IF EXISTS scale_build CASCADE;
CREATE SCHEMA scale_build;
CREATE FUNCTION scale_build.h(bigint, bigint) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT hashint8extended($1, $2) & 2147483647 $$;

DO $$
BEGIN
    IF (SELECT count(*) FROM callback_receipts) > 0 OR (SELECT count(*) FROM proposals) > 20 THEN
        RAISE EXCEPTION 'expected a freshly seeded database';
    END IF;
END $$;

CREATE TABLE scale_build.params AS
SELECT :'anchor'::timestamptz AS anchor, interval '548 days' AS span,
       :proposals::bigint AS np, :receipts::bigint AS nr, :tenants::int AS nt,
       (SELECT coalesce(max(id), 0) FROM proposals) AS pk_base;

-- 1. Tenants and their production integrations.
INSERT INTO tenants (id, name, created_at)
SELECT 'imob-' || lpad(i::text, 3, '0'), 'Imobiliária Parceira ' || i, k.anchor - k.span - interval '30 days'
  FROM scale_build.params k, generate_series(1, k.nt - (SELECT count(*) FROM tenants)) AS i;
INSERT INTO integrations (tenant_id, insurer, environment, is_callback_active, created_at,
                          callback_registered_at)
SELECT t.id, ins, 'production', true, t.created_at, t.created_at + interval '1 day'
  FROM tenants t CROSS JOIN unnest(ARRAY['porto', 'tokio', 'too']) AS ins
 ON CONFLICT DO NOTHING;
CREATE TABLE scale_build.tenants AS
    SELECT row_number() OVER (ORDER BY id) - 1 AS i, id FROM tenants;
CREATE TABLE scale_build.integ AS
    SELECT DISTINCT ON (tenant_id, insurer) tenant_id, insurer, id
      FROM integrations ORDER BY tenant_id, insurer, environment = 'production' DESC, id;

-- 2. Proposals.
CREATE TABLE scale_build.props AS
SELECT q, k.pk_base + q AS pk, t.id AS tenant,
       (ARRAY['porto', 'tokio', 'too'])[1 + scale_build.h(q, 1) % 3] AS insurer,
       k.anchor - k.span + (q - 1 + scale_build.h(q, 2) / 2147483648.0) * (k.span / k.np) AS created_at,
       scale_build.h(q, 3) % 100 AS r
  FROM scale_build.params k
 CROSS JOIN generate_series(1, k.np) AS q
  JOIN scale_build.tenants t ON t.i = q % k.nt;
ALTER TABLE scale_build.props
    ADD COLUMN proposal_id text, ADD COLUMN path int;
UPDATE scale_build.props SET
    proposal_id = CASE insurer
        WHEN 'porto' THEN 'POR-' || extract(year FROM created_at) || '-' || lpad(q::text, 7, '0')
        -- Disjoint ranges per insurer (a tenant has a proposal per id): tokio 600,001 up,
        -- too 10,000,001 up (proposals that were never sent: 5 M and 20 M up, below).
        WHEN 'tokio' THEN (600000 + q)::text
        ELSE (10000000 + q)::text END,
    path = CASE WHEN r < 35 THEN 0 WHEN r < 50 THEN 1 WHEN r < 70 THEN 2 WHEN r < 78 THEN 3
                WHEN r < 85 THEN CASE WHEN insurer = 'too' THEN 2 ELSE 4 END
                WHEN r < 90 THEN 5
                WHEN created_at > (SELECT anchor - interval '14 days' FROM scale_build.params) THEN 6
                ELSE 0 END;

CREATE TABLE scale_build.paths (path int, step int, from_status text, to_status text);
INSERT INTO scale_build.paths VALUES
    (0, 1, 'under_analysis', 'approved'), (1, 1, 'under_analysis', 'refused'),
    (2, 1, 'under_analysis', 'pending'), (2, 2, 'pending', 'approved'),
    (3, 1, 'under_analysis', 'pending'), (3, 2, 'pending', 'refused'),
    (4, 1, 'under_analysis', 'pending'), (4, 2, 'pending', 'under_analysis'),
    (4, 3, 'under_analysis', 'approved'), (5, 1, 'under_analysis', 'pending');

-- 3. Every receipt (cb), before ids: the steps that have happened, their retries, the
-- unchanged re-sends, the stale pendings and the unknown proposals.
CREATE TABLE scale_build.steps AS
SELECT p.*, s.step, s.from_status, s.to_status,
       p.created_at + (SELECT sum(7200 + scale_build.h(p.q * 8 + i, 4) % 424800)
                         FROM generate_series(1, s.step) AS i) * interval '1 second' AS ev_t,
       s.step = max(s.step) OVER (PARTITION BY p.q) AS last_in_path
  FROM scale_build.props p JOIN scale_build.paths s ON s.path = p.path;
DELETE FROM scale_build.steps WHERE ev_t > (SELECT anchor - interval '1 minute' FROM scale_build.params);

CREATE TABLE scale_build.cb0 AS
-- processed, then retries of the same body
SELECT s.q, s.pk, s.tenant, s.insurer, s.proposal_id, s.step, s.from_status, s.to_status,
       s.ev_t, s.q * 8 + s.step AS ev_key, r.n AS retry,
       CASE WHEN r.n = 0 THEN 'processed' ELSE 'duplicate' END AS kind,
       s.ev_t + (3 + scale_build.h(s.q * 8 + s.step, 5) % 60) * interval '1 second'
           + r.n * (60 + scale_build.h(s.q * 8 + s.step, 6) % 540) * interval '1 second' AS rx_t
  FROM scale_build.steps s
 CROSS JOIN LATERAL generate_series(0, scale_build.h(s.q * 8 + s.step, 7) % 5) AS r(n)
UNION ALL
-- the final status again, a new event a day later
SELECT s.q, s.pk, s.tenant, s.insurer, s.proposal_id, 7, s.to_status, s.to_status,
       s.ev_t + interval '1 day', s.q * 8 + 7, 0, 'unchanged', s.ev_t + interval '1 day 20 seconds'
  FROM scale_build.steps s
 WHERE s.last_in_path AND scale_build.h(s.q, 8) % 100 < 40
UNION ALL
-- a stale pending after a final status: refused with 409
SELECT s.q, s.pk, s.tenant, s.insurer, s.proposal_id, 6, s.to_status, 'pending',
       s.ev_t - interval '1 hour', s.q * 8 + 6, 0, 'invalid', s.ev_t + interval '2 days'
  FROM scale_build.steps s
 WHERE s.last_in_path AND s.to_status IN ('approved', 'refused')
   AND scale_build.h(s.q, 9) % 100 < 10;
DELETE FROM scale_build.cb0 WHERE rx_t > (SELECT anchor - interval '10 seconds' FROM scale_build.params);

INSERT INTO scale_build.cb0
SELECT NULL, NULL, t.id, (ARRAY['porto', 'tokio', 'too'])[1 + scale_build.h(-g, 1) % 3],
       NULL, 0, NULL, 'approved', x.t, -g, 0, 'notfound', x.t + interval '4 seconds'
  FROM scale_build.params k
 CROSS JOIN generate_series(1, greatest(0, k.nr - (SELECT count(*) FROM scale_build.cb0))) AS g
 CROSS JOIN LATERAL (SELECT k.anchor - k.span + scale_build.h(g, 2) / 2147483648.0 * k.span
                            - interval '1 minute' AS t) x
  JOIN scale_build.tenants t ON t.i = scale_build.h(g, 3) % k.nt;
UPDATE scale_build.cb0 SET proposal_id = CASE insurer
        WHEN 'porto' THEN 'POR-' || extract(year FROM ev_t) || '-9' || lpad((-ev_key)::text, 7, '0')
        WHEN 'tokio' THEN (5000000 - ev_key)::text
        ELSE (20000000 - ev_key)::text END
 WHERE kind = 'notfound';

-- Ids in time order; the body as the insurer sends it.
CREATE TABLE scale_build.cb AS
SELECT row_number() OVER (ORDER BY c.rx_t, c.ev_key, c.retry) AS rid, c.*, i.id AS integration_id,
       CASE c.insurer WHEN 'too' THEN NULL
            WHEN 'porto' THEN md5('porto' || c.ev_key)::uuid::text
            ELSE 'evt_' || left(md5('tokio' || c.ev_key), 16) END AS event_id,
       CASE c.to_status
            WHEN 'pending' THEN CASE c.insurer WHEN 'porto' THEN 'Comprovante de renda ilegível'
                                WHEN 'tokio' THEN 'Pending: guarantor documents'
                                ELSE 'Aguardando documentos' END
            WHEN 'refused' THEN CASE c.insurer WHEN 'porto' THEN 'Renda incompatível com o aluguel'
                                WHEN 'tokio' THEN 'Refused: income below requirement'
                                ELSE 'Reprovada na análise de crédito' END
            WHEN 'approved' THEN CASE c.insurer WHEN 'porto' THEN NULL
                                 WHEN 'tokio' THEN 'Approved' ELSE 'Aprovada sem ressalvas' END
            ELSE CASE c.insurer WHEN 'tokio' THEN 'Back to analysis' ELSE NULL END
       END AS note
  FROM scale_build.cb0 c
  JOIN scale_build.integ i ON i.tenant_id = c.tenant AND i.insurer = c.insurer;
DROP TABLE scale_build.cb0;
ALTER TABLE scale_build.cb ADD COLUMN body bytea;
UPDATE scale_build.cb SET body = convert_to(CASE insurer
    WHEN 'porto' THEN format('{"idProposta":"%s","situacao":"%s","dataHora":"%s-03:00","motivo":%s,"protocolo":"%s"}',
        proposal_id,
        CASE to_status WHEN 'approved' THEN 'APROVADA' WHEN 'pending' THEN 'PENDENTE'
                       WHEN 'refused' THEN 'RECUSADA' ELSE 'EM_ANALISE' END,
        to_char(ev_t AT TIME ZONE 'America/Sao_Paulo', 'YYYY-MM-DD"T"HH24:MI:SS'),
        coalesce(to_json(note)::text, 'null'), event_id)
    WHEN 'tokio' THEN format('{"event_id":"%s","event":"proposal.analysis_completed","sent_at":%s,"data":{"proposal":{"id":"%s","external_ref":"LOC-%s"},"result":{"code":%s,"description":%s}}}',
        event_id, extract(epoch FROM date_trunc('second', ev_t))::bigint, proposal_id,
        70000 + coalesce(q, 0) % 900000,
        CASE to_status WHEN 'approved' THEN 10 WHEN 'pending' THEN 20 WHEN 'refused' THEN 30 ELSE 5 END,
        to_json(note)::text)
    ELSE format('{"numeroProposta":%s,"parecer":{"resultado":"%s","observacoes":%s},%s"emitidoEm":"%s"}',
        proposal_id,
        CASE to_status WHEN 'approved' THEN 'A' WHEN 'pending' THEN 'P' ELSE 'R' END,
        coalesce(to_json(note)::text, 'null'),
        CASE WHEN to_status = 'pending' THEN '"pendencias":[{"documento":"RG","descricao":"Documento de identidade do fiador"}],' ELSE '' END,
        to_char(ev_t AT TIME ZONE 'America/Sao_Paulo', 'DD/MM/YYYY HH24:MI:SS'))
    END, 'UTF8');
-- Processed receipts in id order number the history rows and the emails.
CREATE TABLE scale_build.done AS
SELECT row_number() OVER (ORDER BY rid) AS hid, rid FROM scale_build.cb WHERE kind = 'processed';

-- 4. Drop secondary indexes and constraints of the tables written; saved to be rebuilt.
CREATE TABLE scale_build.ddl AS
SELECT 'fk' AS kind, c.relname AS tbl, k.conname AS name, pg_get_constraintdef(k.oid) AS def
  FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
 WHERE c.relnamespace = 'proposal'::regnamespace AND k.contype = 'f'
   AND c.relname IN ('proposals', 'callback_receipts', 'applied_callbacks', 'integration_history',
                     'proposal_events', 'email_outbox')
UNION ALL
SELECT 'unique', c.relname, k.conname, pg_get_constraintdef(k.oid)
  FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
 WHERE c.relnamespace = 'proposal'::regnamespace AND k.contype = 'u'
   AND c.relname IN ('proposals', 'callback_receipts', 'applied_callbacks', 'integration_history',
                     'proposal_events', 'email_outbox')
UNION ALL
SELECT 'index', c.relname, i.relname, pg_get_indexdef(i.oid)
  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
 WHERE c.relnamespace = 'proposal'::regnamespace AND NOT x.indisprimary
   AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.oid AND k.conrelid = c.oid)
   AND c.relname IN ('proposals', 'callback_receipts', 'applied_callbacks', 'integration_history',
                     'proposal_events', 'email_outbox');
SELECT format('ALTER TABLE proposal.%I DROP CONSTRAINT %I', tbl, name)
  FROM scale_build.ddl WHERE kind IN ('fk', 'unique') ORDER BY kind = 'unique', name \gexec
SELECT format('DROP INDEX proposal.%I', name) FROM scale_build.ddl WHERE kind = 'index' \gexec

-- 5. The rows.
-- A proposal's status and updated_at are its last processed step's.
CREATE TABLE scale_build.last AS
SELECT DISTINCT ON (pk) pk, to_status, rx_t FROM scale_build.cb
 WHERE kind = 'processed' ORDER BY pk, rid DESC;
INSERT INTO proposals (id, tenant_id, proposal_id, status, contact_email, in_queue, created_at,
                       updated_at)
SELECT p.pk, p.tenant, p.proposal_id, coalesce(l.to_status, 'under_analysis'),
       'locatario.' || lower(p.proposal_id) || '@' || p.tenant || '.example.com',
       coalesce(l.to_status, 'under_analysis') IN ('under_analysis', 'pending'),
       p.created_at, coalesce(l.rx_t + interval '8 milliseconds', p.created_at)
  FROM scale_build.props p
  LEFT JOIN scale_build.last l ON l.pk = p.pk
 ORDER BY p.q;
SELECT setval(pg_get_serial_sequence('proposal.proposals', 'id'), (SELECT max(id) FROM proposals));

INSERT INTO callback_receipts (id, tenant_id, insurer, integration_id, received_at, headers, body,
                               body_sha256, status, http_status, error_code, error_detail,
                               proposal_id, dedup_key, attempts, processed_at)
SELECT c.rid, c.tenant, c.insurer, c.integration_id, c.rx_t,
       jsonb_build_object('content-type', 'application/json',
                          'content-length', octet_length(c.body)::text,
                          'user-agent', CASE c.insurer WHEN 'porto' THEN 'PortoSeguro-Callback/2.3'
                                        WHEN 'tokio' THEN 'TokioMarine-Webhooks/1.8'
                                        ELSE 'Too-Notificador/1.0' END,
                          'peer_addr', CASE c.insurer WHEN 'porto' THEN '200.155.18.40'
                                       WHEN 'tokio' THEN '177.70.104.12' ELSE '189.38.90.7' END),
       c.body, sha256(c.body),
       CASE c.kind WHEN 'invalid' THEN 'failed' WHEN 'notfound' THEN 'failed' ELSE c.kind END,
       CASE c.kind WHEN 'invalid' THEN 409 WHEN 'notfound' THEN 404 ELSE 200 END,
       CASE c.kind WHEN 'invalid' THEN 'invalid_transition' WHEN 'notfound' THEN 'proposal_not_found' END,
       CASE c.kind WHEN 'invalid' THEN format('a callback cannot move a proposal from %s to %s',
                                              c.from_status, c.to_status)
                   WHEN 'notfound' THEN format('no proposal %s for this tenant', to_json(c.proposal_id)) END,
       CASE WHEN c.kind <> 'invalid' THEN c.proposal_id END,
       CASE WHEN c.kind IN ('processed', 'duplicate', 'unchanged') THEN
           CASE WHEN c.event_id IS NOT NULL THEN 'event:' || c.event_id
                ELSE 'sha256:' || encode(sha256(c.body), 'hex') END END,
       1, c.rx_t + (8 + c.rid % 40) * interval '1 millisecond'
  FROM scale_build.cb c
 ORDER BY c.rid;
SELECT setval(pg_get_serial_sequence('proposal.callback_receipts', 'id'),
              (SELECT max(id) FROM callback_receipts));

INSERT INTO applied_callbacks (tenant_id, insurer, dedup_key, proposal_id, receipt_id, status,
                               created_at)
SELECT r.tenant_id, r.insurer, r.dedup_key, c.pk, r.id, c.to_status, r.processed_at
  FROM scale_build.cb c JOIN callback_receipts r ON r.id = c.rid
 WHERE c.kind IN ('processed', 'unchanged')
 ORDER BY c.rid;

INSERT INTO integration_history (id, proposal_id, insurer, receipt_id, from_status, to_status,
                                 insurer_event_id, insurer_note, insurer_time, created_at)
SELECT d.hid, c.pk, c.insurer, c.rid, c.from_status, c.to_status, c.event_id, c.note,
       date_trunc('second', c.ev_t), c.rx_t + (8 + c.rid % 40) * interval '1 millisecond'
  FROM scale_build.done d JOIN scale_build.cb c ON c.rid = d.rid
 ORDER BY d.hid;
SELECT setval(pg_get_serial_sequence('proposal.integration_history', 'id'),
              (SELECT max(id) FROM integration_history));

INSERT INTO email_outbox (id, proposal_id, history_id, recipient, subject, body, status, attempts,
                          next_attempt_at, created_at, sent_at)
SELECT d.hid, c.pk, d.hid, 'locatario.' || lower(c.proposal_id) || '@' || c.tenant || '.example.com',
       format('Proposal %s: %s', c.proposal_id, replace(c.to_status, '_', ' ')),
       format(E'Proposal %s is now %s.\n', c.proposal_id, replace(c.to_status, '_', ' '))
           || CASE WHEN c.note IS NOT NULL THEN format(E'\nThe insurer''s note: %s\n', c.note) ELSE '' END,
       CASE WHEN x.at < k.anchor - interval '5 minutes' THEN 'sent' ELSE 'queued' END,
       CASE WHEN x.at < k.anchor - interval '5 minutes' THEN 1 ELSE 0 END,
       x.at, x.at,
       CASE WHEN x.at < k.anchor - interval '5 minutes' THEN x.at + interval '2 seconds' END
  FROM scale_build.done d JOIN scale_build.cb c ON c.rid = d.rid
 CROSS JOIN scale_build.params k
 CROSS JOIN LATERAL (SELECT c.rx_t + (8 + c.rid % 40) * interval '1 millisecond' AS at) x
 ORDER BY d.hid;
SELECT setval(pg_get_serial_sequence('proposal.email_outbox', 'id'), (SELECT max(id) FROM email_outbox));

INSERT INTO proposal_events (proposal_id, kind, receipt_id, data, created_at)
SELECT c.pk, e.kind, c.rid, e.data, c.rx_t + (8 + c.rid % 40) * interval '1 millisecond'
  FROM scale_build.cb c
  LEFT JOIN scale_build.done d ON d.rid = c.rid
 CROSS JOIN LATERAL (VALUES
     (1, 'callback_received', jsonb_build_object('insurer', c.insurer, 'status', c.to_status,
                                                 'event_id', c.event_id)),
     (2, 'status_changed', jsonb_build_object('from', c.from_status, 'to', c.to_status)),
     (3, 'left_queue', jsonb_build_object('status', c.to_status)),
     (4, 'email_queued', jsonb_build_object('email_id', d.hid))) AS e(n, kind, data)
 WHERE (c.kind = 'unchanged' AND e.n = 1)
    OR (c.kind = 'processed' AND (e.n <> 3 OR (c.from_status IN ('under_analysis', 'pending')
                                               AND c.to_status IN ('approved', 'refused'))))
 ORDER BY c.rid, e.n;

-- 6. Indexes and constraints back.
SELECT format('ALTER TABLE proposal.%I ADD CONSTRAINT %I %s', tbl, name, def)
  FROM scale_build.ddl WHERE kind = 'unique' ORDER BY name \gexec
SELECT def FROM scale_build.ddl WHERE kind = 'index' ORDER BY name \gexec
SELECT format('ALTER TABLE proposal.%I ADD CONSTRAINT %I %s', tbl, name, def)
  FROM scale_build.ddl WHERE kind = 'fk' ORDER BY name \gexec

DROP SCHEMA scale_build CASCADE;
