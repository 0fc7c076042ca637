//! The email outbox: written in the transaction of the transition it announces, sent later.

use chrono::{DateTime, Utc};
use diesel::QueryResult;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::email::Email;
use crate::domain::insurer::Insurer;
use crate::domain::sender::Sender;
use crate::schema::proposal::{email_outbox as o, proposals, tenants};
use common::text_enum;

text_enum! {
    /// Where an outbox email stands for the worker.
    pub enum OutboxStatus {
        /// The worker sends it (again) once `next_attempt_at` is due.
        Queued = "queued",
        Sent = "sent",
        /// The relay refused it for good (a 5xx answer to its recipient or its content): the
        /// worker leaves it alone until an operator retries it.
        Failed = "failed",
    }
}

text_enum! {
    /// Where an email stands, as an operator sees it (docs/proposal-callback.md, "Email").
    pub enum Delivery {
        /// Waiting for its first attempt (or for the worker: no `SMTP_URL`).
        Queued = "queued",
        /// Its last attempt failed for a reason that may pass (the relay down or silent, a
        /// 4xx answer, a wrong password): `last_error` says why; tried again at
        /// `next_attempt_at`, with a doubling delay.
        Retrying = "retrying",
        /// The relay refused it for good (a 5xx answer to its recipient or content, kept in
        /// `last_error`): not tried again unless an operator retries it.
        Failed = "failed",
        /// The relay accepted it.
        Sent = "sent",
    }
}

/// An email as an operator sees it, with the proposal it is about.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = o)]
pub struct EmailRow {
    pub id: i64,
    #[diesel(select_expression = proposals::proposal_id)]
    pub proposal: String,
    /// Never null for a proposal's email (the operators' emails name none, and a check says
    /// both references are there or neither).
    #[diesel(
        select_expression = o::history_id.assume_not_null(),
        select_expression_type = diesel::dsl::AssumeNotNull<o::history_id>
    )]
    pub history_id: i64,
    pub recipient: String,
    pub subject: String,
    pub status: OutboxStatus,
    pub attempts: i32,
    pub next_attempt_at: DateTime<Utc>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
    /// When the relay refused it for good; set while it is `failed`.
    pub failed_at: Option<DateTime<Utc>>,
    /// Its `Message-ID` header, given at its first attempt.
    pub message_id: Option<String>,
}

impl EmailRow {
    pub fn delivery(&self) -> Delivery {
        match (self.status, &self.last_error) {
            (OutboxStatus::Sent, _) => Delivery::Sent,
            (OutboxStatus::Failed, _) => Delivery::Failed,
            (OutboxStatus::Queued, Some(_)) => Delivery::Retrying,
            (OutboxStatus::Queued, None) => Delivery::Queued,
        }
    }
}

/// The tenant's emails (of one proposal, in one delivery state), newest first, below
/// `before_id`.
pub async fn list(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    proposal_id: Option<&str>,
    delivery: Option<Delivery>,
    before_id: Option<i64>,
    limit: i64,
) -> QueryResult<Vec<EmailRow>> {
    let mut q = o::table
        .inner_join(proposals::table)
        .filter(proposals::tenant_id.eq(tenant))
        .select(EmailRow::as_select())
        .order(o::id.desc())
        .limit(limit)
        .into_boxed();
    if let Some(p) = proposal_id {
        q = q.filter(proposals::proposal_id.eq(p));
    }
    match delivery {
        None => {}
        Some(Delivery::Sent) => q = q.filter(o::status.eq(OutboxStatus::Sent)),
        Some(Delivery::Failed) => q = q.filter(o::status.eq(OutboxStatus::Failed)),
        Some(Delivery::Retrying) => {
            q = q
                .filter(o::status.eq(OutboxStatus::Queued))
                .filter(o::last_error.is_not_null())
        }
        Some(Delivery::Queued) => {
            q = q
                .filter(o::status.eq(OutboxStatus::Queued))
                .filter(o::last_error.is_null())
        }
    }
    if let Some(b) = before_id {
        q = q.filter(o::id.lt(b));
    }
    q.load(conn).await
}

/// One of the tenant's emails; none for another tenant's.
pub async fn find(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    id: i64,
) -> QueryResult<Option<EmailRow>> {
    o::table
        .inner_join(proposals::table)
        .filter(proposals::tenant_id.eq(tenant))
        .filter(o::id.eq(id))
        .select(EmailRow::as_select())
        .first(conn)
        .await
        .optional()
}

/// Puts the tenant's email `id` back in the queue, due at `now`, if the relay refused it for
/// good (`failed`); its attempts and `last_error` stay, so its story reads on. One statement:
/// of two retries at once, one finds it `failed`. True when it was.
pub async fn requeue_failed(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    id: i64,
    now: DateTime<Utc>,
) -> QueryResult<bool> {
    Ok(requeue_failed_many(conn, tenant, &[id], now).await?.len() == 1)
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = o)]
pub struct OutboxRow {
    pub id: i64,
    pub recipient: String,
    pub subject: String,
    /// The text part.
    pub body: String,
    /// The HTML part; none for emails queued before there was one.
    pub html_body: Option<String>,
    pub attempts: i32,
    /// Its `Message-ID`, the same on every attempt.
    pub message_id: String,
    /// Its tenant's sender when it was queued (none: `EMAIL_FROM`).
    pub from_name: Option<String>,
    pub from_address: Option<String>,
    pub reply_to: Option<String>,
}

impl OutboxRow {
    /// Who it comes from, as fixed when it was queued.
    pub fn sender(&self) -> Sender {
        Sender::stored(
            self.from_name.as_deref(),
            self.from_address.as_deref(),
            self.reply_to.as_deref(),
        )
    }
}

/// The tenant's `column` (its sender), read by the INSERT that queues an email: the sender is
/// fixed when the email is queued, in the same statement.
macro_rules! tenants_sender {
    ($tenant:expr, $column:ident) => {
        tenants::table
            .find($tenant)
            .select(tenants::$column)
            .single_value()
    };
}

/// Queues an email to a tenant's operator, about no proposal (docs/proposal-callback.md,
/// "Silent insurers"), due at once: queued at `at`, first attempt at `at`. The same worker
/// sends it, with the same retries, from `tenant`'s sender.
pub async fn enqueue_operator(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    recipient: &str,
    email: &Email,
    at: DateTime<Utc>,
) -> QueryResult<i64> {
    diesel::insert_into(o::table)
        .values((
            o::recipient.eq(recipient),
            o::subject.eq(&email.subject),
            o::body.eq(&email.text),
            o::html_body.eq(Some(&email.html)),
            o::created_at.eq(at),
            o::next_attempt_at.eq(at),
            o::from_name.eq(tenants_sender!(tenant, from_name)),
            o::from_address.eq(tenants_sender!(tenant, from_address)),
            o::reply_to.eq(tenants_sender!(tenant, reply_to)),
        ))
        .returning(o::id)
        .get_result(conn)
        .await
}

#[derive(QueryableByName)]
struct Claimed {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    id: i64,
    #[diesel(sql_type = diesel::sql_types::Text)]
    recipient: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    subject: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    body: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    html_body: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Integer)]
    attempts: i32,
    #[diesel(sql_type = diesel::sql_types::Text)]
    message_id: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    from_name: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    from_address: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    reply_to: Option<String>,
}

/// Claims the next email due at `now` for `lease` and counts the attempt, in one statement
/// that commits on its own. The claim moves the row's `next_attempt_at` past the lease: no
/// worker (of any replica) takes it meanwhile, and if this one dies before marking it, the
/// row is due again once the lease is over. `SKIP LOCKED` lets concurrent claims pass each
/// other. Rows in `skip` (those this round already tried) are left alone. The row keeps the
/// `Message-ID` its first claim gave it; a row claimed for the first time takes
/// `<unique@domain>`, the domain its sender's (`fallback_domain`, `EMAIL_FROM`'s, without one).
pub async fn claim_next(
    conn: &mut AsyncPgConnection,
    now: DateTime<Utc>,
    lease: std::time::Duration,
    skip: &[i64],
    unique: &str,
    fallback_domain: &str,
) -> QueryResult<Option<OutboxRow>> {
    diesel::sql_query(
        "UPDATE proposal.email_outbox SET next_attempt_at = $3 + make_interval(secs => $1), \
                attempts = attempts + 1, \
                message_id = coalesce(message_id, '<' || $4 || '@' || \
                    coalesce(lower(split_part(from_address, '@', 2)), $5) || '>') \
         WHERE id = (SELECT id FROM proposal.email_outbox \
                     WHERE status = 'queued' AND next_attempt_at <= $3 \
                       AND id <> ALL($2) \
                     ORDER BY next_attempt_at, id LIMIT 1 \
                     FOR UPDATE SKIP LOCKED) \
         RETURNING id, recipient, subject, body, html_body, attempts, message_id, \
                   from_name, from_address, reply_to",
    )
    .bind::<diesel::sql_types::Double, _>(lease.as_secs_f64())
    .bind::<diesel::sql_types::Array<diesel::sql_types::BigInt>, _>(skip)
    .bind::<diesel::sql_types::Timestamptz, _>(now)
    .bind::<diesel::sql_types::Text, _>(unique)
    .bind::<diesel::sql_types::Text, _>(fallback_domain)
    .get_result::<Claimed>(conn)
    .await
    .optional()
    .map(|row| {
        row.map(|c| OutboxRow {
            id: c.id,
            recipient: c.recipient,
            subject: c.subject,
            body: c.body,
            html_body: c.html_body,
            attempts: c.attempts,
            message_id: c.message_id,
            from_name: c.from_name,
            from_address: c.from_address,
            reply_to: c.reply_to,
        })
    })
}

/// Delivered at `at`: sent for good (the attempt was counted by [`claim_next`]).
pub async fn mark_sent(
    conn: &mut AsyncPgConnection,
    id: i64,
    at: DateTime<Utc>,
) -> QueryResult<()> {
    diesel::update(o::table.find(id))
        .set((
            o::status.eq(OutboxStatus::Sent),
            o::sent_at.eq(Some(at)),
            o::last_error.eq(None::<String>),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

/// Not delivered: why, and when to try again (the attempt was counted by [`claim_next`]).
pub async fn mark_retry(
    conn: &mut AsyncPgConnection,
    id: i64,
    error: &str,
    next_attempt_at: DateTime<Utc>,
) -> QueryResult<()> {
    diesel::update(o::table.find(id))
        .set((
            o::next_attempt_at.eq(next_attempt_at),
            o::last_error.eq(Some(error)),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

/// Refused for good at `at` (a 5xx answer to its recipient or content): `error` says how;
/// the worker no longer takes it (the attempt was counted by [`claim_next`]).
pub async fn mark_failed(
    conn: &mut AsyncPgConnection,
    id: i64,
    error: &str,
    at: DateTime<Utc>,
) -> QueryResult<()> {
    diesel::update(o::table.find(id))
        .set((
            o::status.eq(OutboxStatus::Failed),
            o::failed_at.eq(Some(at)),
            o::last_error.eq(Some(error)),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, QueryableByName)]
pub struct QueueStats {
    /// Emails not sent yet.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub queued: i64,
    /// Age in seconds of the oldest of them; 0 when there is none.
    #[diesel(sql_type = diesel::sql_types::Double)]
    pub oldest_age_secs: f64,
    /// Emails the relay refused for good, waiting for an operator.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub failed: i64,
}

/// What `/metrics` shows of the outbox at `now`; the queued rows through their partial index.
pub async fn queue_stats(
    conn: &mut AsyncPgConnection,
    now: DateTime<Utc>,
) -> QueryResult<QueueStats> {
    diesel::sql_query(
        "SELECT count(*) AS queued, \
                coalesce(extract(epoch FROM $1 - min(created_at)), 0)::float8 AS oldest_age_secs, \
                (SELECT count(*) FROM proposal.email_outbox WHERE status = 'failed') AS failed \
         FROM proposal.email_outbox WHERE status = 'queued'",
    )
    .bind::<diesel::sql_types::Timestamptz, _>(now)
    .get_result(conn)
    .await
}

/// Records an email as sent at `at` on its first attempt **without any relay seeing it**: only
/// for the demo seed's emails (addressed to example.com, and backdated), so that no worker
/// ever delivers them. An operator sees them as `sent`, like the mail a running service
/// would have sent at that time.
pub async fn record_sent_without_relay(
    conn: &mut AsyncPgConnection,
    id: i64,
    at: DateTime<Utc>,
) -> QueryResult<()> {
    diesel::update(o::table.find(id).filter(o::status.eq(OutboxStatus::Queued)))
        .set((
            o::status.eq(OutboxStatus::Sent),
            o::attempts.eq(o::attempts + 1),
            o::sent_at.eq(Some(at)),
            o::last_error.eq(None::<String>),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

text_enum! {
    /// What a `failed` email's relay refused (read from its `last_error`).
    pub enum FailureKind {
        /// Its recipient (a 5xx answer to RCPT TO): often a mistyped or closed mailbox.
        Recipient = "recipient",
        /// Its content (a 5xx answer to DATA or at the message's end): spam filters, size.
        Content = "content",
        /// Anything else: a message that could not be built, an address the relay cannot take.
        Other = "other",
    }
}

/// Which `failed` emails a bulk retry sends again: the tenant's, each field narrowing.
#[derive(Debug, Clone, Default)]
pub struct FailedFilter {
    /// The insurer of the transition the email announces (operators' emails have none).
    pub insurer: Option<Insurer>,
    /// Refused at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Refused before this time.
    pub until: Option<DateTime<Utc>>,
    pub kind: Option<FailureKind>,
}

/// The tenant's `failed` emails that match `filter`, oldest refusal first, at most `limit`.
pub async fn failed_matching(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    filter: &FailedFilter,
    limit: i64,
) -> QueryResult<Vec<i64>> {
    use crate::schema::proposal::integration_history as h;
    let mut q = o::table
        .inner_join(proposals::table)
        .inner_join(h::table)
        .filter(proposals::tenant_id.eq(tenant))
        .filter(o::status.eq(OutboxStatus::Failed))
        .select(o::id)
        .order((o::failed_at, o::id))
        .limit(limit)
        .into_boxed();
    if let Some(insurer) = &filter.insurer {
        q = q.filter(h::insurer.eq(*insurer));
    }
    if let Some(since) = filter.since {
        q = q.filter(o::failed_at.ge(since));
    }
    if let Some(until) = filter.until {
        q = q.filter(o::failed_at.lt(until));
    }
    let (rcpt, data, message) = ("SMTP RCPT TO:%", "SMTP DATA:%", "SMTP message:%");
    match filter.kind {
        None => {}
        Some(FailureKind::Recipient) => q = q.filter(o::last_error.like(rcpt)),
        Some(FailureKind::Content) => {
            q = q.filter(o::last_error.like(data).or(o::last_error.like(message)))
        }
        Some(FailureKind::Other) => {
            q = q.filter(
                o::last_error
                    .not_like(rcpt)
                    .and(o::last_error.not_like(data))
                    .and(o::last_error.not_like(message)),
            )
        }
    }
    q.load(conn).await
}

/// Puts the tenant's emails `ids` back in the queue, due at `now`, those still `failed` (of
/// two bulk retries at once, each email goes back once); their ids.
pub async fn requeue_failed_many(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    ids: &[i64],
    now: DateTime<Utc>,
) -> QueryResult<Vec<i64>> {
    // The operators' emails (no proposal) are no tenant admin's to retry.
    let own = proposals::table
        .filter(proposals::tenant_id.eq(tenant))
        .select(proposals::id.nullable());
    diesel::update(
        o::table
            .filter(o::id.eq_any(ids))
            .filter(o::status.eq(OutboxStatus::Failed))
            .filter(o::proposal_id.eq_any(own)),
    )
    .set((
        o::status.eq(OutboxStatus::Queued),
        o::failed_at.eq(None::<DateTime<Utc>>),
        o::next_attempt_at.eq(now),
    ))
    .returning(o::id)
    .get_results(conn)
    .await
}
