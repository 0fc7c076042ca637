//! The writes of a callback applied to its proposal (docs/proposal-callback.md, "The
//! callback, in order", step 10), each in one statement inside the applying transaction:
//! [`write_transition`] for an accepted transition (the proposal's status, its history row,
//! the outbox email, its events and the receipt's outcome), [`write_unchanged`] for a callback
//! that confirms the status the proposal has. Each write is a data-modifying `WITH` query;
//! the email's row reads the history row's id and the last event reads the email's, so
//! PostgreSQL runs them in that order, and the foreign keys are checked at the statement's
//! end, when every row is there.

use chrono::{DateTime, Utc};
use common::db::cached_by_text;
use diesel::QueryResult;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::email::Email;
use crate::domain::insurer::Callback;
use crate::domain::status::{ReceiptStatus, Status};
use crate::store::proposals::Event;
use crate::store::receipts::Receipt;

/// An accepted transition, as [`write_transition`] records it.
pub struct Accepted<'a> {
    /// The proposal's key (`proposals.id`), row-locked by the caller.
    pub proposal_pk: i64,
    /// The proposal's tenant: the email goes from its sender, fixed when it is queued.
    pub tenant: &'a str,
    pub receipt: &'a Receipt,
    pub callback: &'a Callback,
    /// The status it had.
    pub from: Status,
    /// The callback's redelivery key, claimed by the caller.
    pub key: &'a str,
    /// The proposal's contact.
    pub recipient: &'a str,
    pub email: &'a Email,
    /// The events before the email's (`email_queued`, which names the email's id, is
    /// written after them by the statement that knows that id).
    pub events: &'a [Event],
}

/// The statement of [`write_transition`]. One text whatever the events: kept prepared
/// (`common::db::cached_by_text`).
const TRANSITION: &str = r#"WITH u AS (
    UPDATE "proposal"."proposals" SET status = $2, in_queue = $3, last_event_at = $4, updated_at = $5
    WHERE id = $1
), h AS (
    INSERT INTO "proposal"."integration_history" (proposal_id, insurer, receipt_id, from_status, to_status, insurer_event_id, insurer_note, insurer_time, created_at)
    VALUES ($1, $6, $7, $8, $2, $9, $10, $4, $5)
    RETURNING id
), o AS (
    INSERT INTO "proposal"."email_outbox" (proposal_id, history_id, recipient, subject, body, html_body, created_at, next_attempt_at, from_name, from_address, reply_to)
    SELECT $1, h.id, $11, $12, $13, $14, $5, $5, t.from_name, t.from_address, t.reply_to
    FROM h LEFT JOIN "proposal"."tenants" t ON t.id = $15
    RETURNING id
), e AS (
    INSERT INTO "proposal"."proposal_events" (proposal_id, kind, receipt_id, data, created_at)
    SELECT $1, e.kind, $7, e.data, $5 FROM (
        SELECT e.kind, e.data, e.n FROM unnest($16::text[], $17::jsonb[]) WITH ORDINALITY AS e(kind, data, n)
        UNION ALL
        SELECT 'email_queued', jsonb_build_object('email_id', o.id), 9223372036854775807 FROM o
    ) AS e ORDER BY e.n
), r AS (
    UPDATE "proposal"."callback_receipts" SET status = $20, http_status = 200, error_code = NULL, error_detail = NULL,
        proposal_id = $18, dedup_key = $19, event_at = $4, attempts = attempts + 1, processed_at = $5
    WHERE id = $7
)
SELECT id FROM o"#;

/// Records `accepted` at `at` in the caller's transaction, in one statement ([`TRANSITION`]): the
/// proposal's new status, queue flag and last event time, the history row, the outbox email
/// (from the tenant's sender), the events in their order then `email_queued`, and the
/// receipt's outcome (`processed`). Returns the email's id.
pub async fn write_transition(
    conn: &mut AsyncPgConnection,
    accepted: &Accepted<'_>,
    at: DateTime<Utc>,
) -> QueryResult<i64> {
    use diesel::sql_types::{Array, BigInt, Bool, Jsonb, Nullable, Text, Timestamptz};

    #[derive(diesel::QueryableByName)]
    struct Queued {
        #[diesel(sql_type = BigInt)]
        id: i64,
    }

    let Accepted {
        proposal_pk,
        tenant,
        receipt,
        callback,
        from,
        key,
        recipient,
        email,
        events,
    } = accepted;
    let to = callback.status;
    let kinds: Vec<&str> = events.iter().map(|e| e.kind).collect();
    let data: Vec<&serde_json::Value> = events.iter().map(|e| &e.data).collect();
    let queued: Queued = cached_by_text(
        diesel::sql_query(TRANSITION)
            .bind::<BigInt, _>(*proposal_pk)
            .bind::<Text, _>(to)
            .bind::<Bool, _>(to.in_queue())
            .bind::<Timestamptz, _>(callback.occurred_at)
            .bind::<Timestamptz, _>(at)
            .bind::<Text, _>(receipt.insurer)
            .bind::<BigInt, _>(receipt.id)
            .bind::<Text, _>(*from)
            .bind::<Nullable<Text>, _>(callback.event_id.as_deref())
            .bind::<Nullable<Text>, _>(callback.note.as_deref())
            .bind::<Text, _>(recipient)
            .bind::<Text, _>(&email.subject)
            .bind::<Text, _>(&email.text)
            .bind::<Nullable<Text>, _>(Some(&email.html))
            .bind::<Text, _>(tenant)
            .bind::<Array<Text>, _>(kinds)
            .bind::<Array<Jsonb>, _>(data)
            .bind::<Text, _>(&callback.proposal_id)
            .bind::<Text, _>(key)
            .bind::<Text, _>(ReceiptStatus::Processed),
    )
    .get_result(conn)
    .await?;
    Ok(queued.id)
}

/// The statement of [`write_unchanged`]; one text, kept prepared.
const UNCHANGED: &str = r#"WITH u AS (
    UPDATE "proposal"."proposals" SET last_event_at = $2 WHERE id = $1
), e AS (
    INSERT INTO "proposal"."proposal_events" (proposal_id, kind, receipt_id, data, created_at)
    VALUES ($1, $4, $3, $5, $6)
)
UPDATE "proposal"."callback_receipts" SET status = $7, http_status = 200, error_code = NULL, error_detail = NULL,
    proposal_id = $8, dedup_key = $9, event_at = $2, attempts = attempts + 1, processed_at = $6
WHERE id = $3"#;

/// Records at `at`, in the caller's transaction and one statement ([`UNCHANGED`]), a
/// `callback` that confirmed the status the proposal `proposal_pk` already had: the
/// callback's time as the proposal's last event time (an older callback is then stale; the
/// status stays), its one `event`, and the receipt's outcome (`unchanged`, under redelivery
/// `key`).
pub async fn write_unchanged(
    conn: &mut AsyncPgConnection,
    proposal_pk: i64,
    receipt: &Receipt,
    callback: &Callback,
    key: &str,
    event: &Event,
    at: DateTime<Utc>,
) -> QueryResult<()> {
    use diesel::sql_types::{BigInt, Jsonb, Text, Timestamptz};
    cached_by_text(
        diesel::sql_query(UNCHANGED)
            .bind::<BigInt, _>(proposal_pk)
            .bind::<Timestamptz, _>(callback.occurred_at)
            .bind::<BigInt, _>(receipt.id)
            .bind::<Text, _>(event.kind)
            .bind::<Jsonb, _>(&event.data)
            .bind::<Timestamptz, _>(at)
            .bind::<Text, _>(ReceiptStatus::Unchanged)
            .bind::<Text, _>(&callback.proposal_id)
            .bind::<Text, _>(key),
    )
    .execute(conn)
    .await?;
    Ok(())
}
