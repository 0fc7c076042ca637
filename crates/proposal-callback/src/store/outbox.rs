//! The email outbox: written in the transaction of the transition it announces, sent later.

use chrono::{DateTime, Utc};
use diesel::QueryResult;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::email::compose::Email;
use crate::schema::proposal::email_outbox as o;
use crate::text_enum::text_enum;

text_enum! {
    /// Whether an outbox email still waits for the worker.
    pub enum OutboxStatus {
        Queued = "queued",
        Sent = "sent",
    }
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = o)]
pub struct OutboxRow {
    pub id: i64,
    pub recipient: String,
    pub subject: String,
    pub body: String,
    pub attempts: i32,
}

pub async fn enqueue(
    conn: &mut AsyncPgConnection,
    proposal_pk: i64,
    history_id: i64,
    recipient: &str,
    email: &Email,
) -> QueryResult<i64> {
    diesel::insert_into(o::table)
        .values((
            o::proposal_id.eq(proposal_pk),
            o::history_id.eq(history_id),
            o::recipient.eq(recipient),
            o::subject.eq(&email.subject),
            o::body.eq(&email.body),
        ))
        .returning(o::id)
        .get_result(conn)
        .await
}

/// Due emails, locked for this transaction; rows another replica holds are skipped, so
/// several workers never send the same email at the same time.
pub async fn claim_due(conn: &mut AsyncPgConnection, limit: i64) -> QueryResult<Vec<OutboxRow>> {
    o::table
        .filter(o::status.eq(OutboxStatus::Queued))
        .filter(o::next_attempt_at.le(diesel::dsl::now))
        .order((o::next_attempt_at, o::id))
        .limit(limit)
        .select(OutboxRow::as_select())
        .for_update()
        .skip_locked()
        .load(conn)
        .await
}

pub async fn mark_sent(conn: &mut AsyncPgConnection, id: i64) -> QueryResult<()> {
    diesel::update(o::table.find(id))
        .set((
            o::status.eq(OutboxStatus::Sent),
            o::attempts.eq(o::attempts + 1),
            o::sent_at.eq(diesel::dsl::now),
            o::last_error.eq(None::<String>),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn mark_retry(
    conn: &mut AsyncPgConnection,
    id: i64,
    error: &str,
    next_attempt_at: DateTime<Utc>,
) -> QueryResult<()> {
    diesel::update(o::table.find(id))
        .set((
            o::attempts.eq(o::attempts + 1),
            o::next_attempt_at.eq(next_attempt_at),
            o::last_error.eq(Some(error)),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

pub async fn count_queued(conn: &mut AsyncPgConnection) -> QueryResult<i64> {
    o::table
        .filter(o::status.eq(OutboxStatus::Queued))
        .count()
        .get_result(conn)
        .await
}
