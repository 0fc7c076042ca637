//! Callback receipts: every request that reached the parsing stage, stored raw first.

use chrono::{DateTime, Utc};
use common::db::cached_by_text;
use diesel::QueryResult;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::insurer::Insurer;
use crate::domain::status::{Outcome, ReceiptStatus};
use crate::schema::proposal::callback_receipts as r;

/// What processing needs of a receipt.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = r)]
pub struct Receipt {
    pub id: i64,
    pub tenant_id: String,
    pub insurer: Insurer,
    /// The integration whose token it came with (none only for receipts stored by hand).
    pub integration_id: Option<i64>,
    pub body: Vec<u8>,
    pub body_sha256: Vec<u8>,
    /// The proposal it concerned, once processed (or, deferred, the one its body names).
    pub proposal_id: Option<String>,
    /// When its body was erased after its tenant's retention (`body` is empty then): nothing
    /// is left to process again.
    pub body_erased_at: Option<DateTime<Utc>>,
}

#[derive(Insertable)]
#[diesel(table_name = r)]
pub struct NewReceipt<'a> {
    pub tenant_id: &'a str,
    /// When it arrived, by the service's clock.
    pub received_at: DateTime<Utc>,
    pub insurer: Insurer,
    pub integration_id: Option<i64>,
    pub headers: serde_json::Value,
    pub body: &'a [u8],
    pub body_sha256: &'a [u8],
}

/// Everything an operator sees of a receipt.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = r)]
pub struct ReceiptRow {
    pub id: i64,
    pub insurer: Insurer,
    pub received_at: DateTime<Utc>,
    pub headers: serde_json::Value,
    pub body: Vec<u8>,
    pub status: ReceiptStatus,
    pub http_status: Option<i16>,
    pub error_code: Option<String>,
    pub error_detail: Option<String>,
    pub proposal_id: Option<String>,
    pub attempts: i32,
    pub processed_at: Option<DateTime<Utc>>,
    /// The insurer's event time, once parsed.
    pub event_at: Option<DateTime<Utc>>,
    /// When its body was erased after its tenant's retention (`body` is empty then).
    pub body_erased_at: Option<DateTime<Utc>>,
}

/// Stored in its own statement (autocommit), so it is durable before parsing starts.
pub async fn insert(conn: &mut AsyncPgConnection, new: &NewReceipt<'_>) -> QueryResult<Receipt> {
    // Its optional fields give the text a few shapes, each cached by its text.
    cached_by_text(
        diesel::insert_into(r::table)
            .values(new)
            .returning(Receipt::as_returning()),
    )
    .get_result(conn)
    .await
}

/// Stored as [`insert`] does, only while the integration it names is the tenant's with that
/// insurer and still holds a live Basic token that was live before `token_issued_at`'s next
/// second (a callback JWT's `iat`: `integrations::token_binding` says why not). One
/// statement, `INSERT ... SELECT` from the integration's row: the JWT's check and the
/// receipt cannot disagree, and cost one round trip. None: nothing stored.
pub async fn insert_for_token(
    conn: &mut AsyncPgConnection,
    new: &NewReceipt<'_>,
    token_issued_at: i64,
) -> QueryResult<Option<Receipt>> {
    use diesel::dsl::exists;
    use diesel::sql_types::{Bytea, Jsonb, Timestamptz};

    use crate::schema::proposal::{integrations as i, tokens as t};
    use crate::store::integrations::REGISTER_CALLBACK;

    let (Some(integration_id), Some(next_second)) = (
        new.integration_id,
        DateTime::from_timestamp(token_issued_at.saturating_add(1), 0),
    ) else {
        return Ok(None);
    };
    let live_token = t::table
        .filter(t::integration_id.eq(i::id))
        .filter(t::token_type.eq(REGISTER_CALLBACK))
        .filter(t::revoked_at.is_null())
        .filter(t::activated_at.lt(next_second));
    let from_integration = i::table
        .filter(i::id.eq(integration_id))
        .filter(i::tenant_id.eq(new.tenant_id))
        .filter(i::insurer.eq(new.insurer))
        .filter(exists(live_token))
        .select((
            i::tenant_id,
            new.received_at.into_sql::<Timestamptz>(),
            i::insurer,
            i::id.nullable(),
            (&new.headers).into_sql::<Jsonb>(),
            new.body.into_sql::<Bytea>(),
            new.body_sha256.into_sql::<Bytea>(),
        ));
    cached_by_text(
        diesel::insert_into(r::table)
            .values(from_integration)
            .into_columns((
                r::tenant_id,
                r::received_at,
                r::insurer,
                r::integration_id,
                r::headers,
                r::body,
                r::body_sha256,
            ))
            .returning(Receipt::as_returning()),
    )
    .get_result(conn)
    .await
    .optional()
}

pub async fn find(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    id: i64,
) -> QueryResult<Option<Receipt>> {
    r::table
        .filter(r::id.eq(id).and(r::tenant_id.eq(tenant)))
        .select(Receipt::as_select())
        .first(conn)
        .await
        .optional()
}

/// One of the tenant's receipts as an operator sees it; none for another tenant's.
pub async fn find_row(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    id: i64,
) -> QueryResult<Option<ReceiptRow>> {
    r::table
        .filter(r::id.eq(id).and(r::tenant_id.eq(tenant)))
        .select(ReceiptRow::as_select())
        .first(conn)
        .await
        .optional()
}

/// Which receipts an operator asks for; every field narrows the set.
#[derive(Debug, Clone, Default)]
pub struct ReceiptFilter {
    pub status: Option<ReceiptStatus>,
    /// The error code of a failed one (`proposal_not_found`, `invalid_transition`, ...).
    pub code: Option<String>,
    pub insurer: Option<Insurer>,
    pub proposal_id: Option<String>,
    /// Received at or after.
    pub since: Option<DateTime<Utc>>,
    /// Only receipts up to this id (the console's bulk replay confirms the receipts it
    /// previewed, not those that matched since).
    pub up_to_id: Option<i64>,
}

fn filtered<'a>(tenant: &'a str, f: &'a ReceiptFilter) -> r::BoxedQuery<'a, diesel::pg::Pg> {
    let mut q = r::table.filter(r::tenant_id.eq(tenant)).into_boxed();
    if let Some(s) = f.status {
        q = q.filter(r::status.eq(s));
    }
    if let Some(c) = &f.code {
        q = q.filter(r::error_code.eq(c));
    }
    if let Some(i) = &f.insurer {
        q = q.filter(r::insurer.eq(i));
    }
    if let Some(p) = &f.proposal_id {
        q = q.filter(r::proposal_id.eq(p));
    }
    if let Some(t) = f.since {
        q = q.filter(r::received_at.ge(t));
    }
    if let Some(id) = f.up_to_id {
        q = q.filter(r::id.le(id));
    }
    q
}

/// The tenant's receipts matching `filter`, newest first, below `before_id`.
pub async fn list(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    filter: &ReceiptFilter,
    before_id: Option<i64>,
    limit: i64,
) -> QueryResult<Vec<ReceiptRow>> {
    let mut q = filtered(tenant, filter)
        .select(ReceiptRow::as_select())
        .order(r::id.desc())
        .limit(limit);
    if let Some(b) = before_id {
        q = q.filter(r::id.lt(b));
    }
    q.load(conn).await
}

/// Ids of the tenant's receipts matching `filter`, oldest (first received) first, above
/// `after_id`: the order a bulk replay takes them in.
pub async fn oldest_matching(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    filter: &ReceiptFilter,
    after_id: Option<i64>,
    limit: i64,
) -> QueryResult<Vec<i64>> {
    let mut q = filtered(tenant, filter)
        .select(r::id)
        .order(r::id.asc())
        .limit(limit);
    if let Some(a) = after_id {
        q = q.filter(r::id.gt(a));
    }
    q.load(conn).await
}

/// The integration's oldest deferred receipt (arrival order: ids are given on arrival).
pub async fn oldest_deferred(
    conn: &mut AsyncPgConnection,
    integration_id: i64,
) -> QueryResult<Option<Receipt>> {
    r::table
        .filter(r::integration_id.eq(integration_id))
        .filter(r::status.eq(ReceiptStatus::Deferred))
        .order(r::id.asc())
        .select(Receipt::as_select())
        .first(conn)
        .await
        .optional()
}

/// How many of the integration's receipts wait for it to be resumed.
pub async fn count_deferred(conn: &mut AsyncPgConnection, integration_id: i64) -> QueryResult<i64> {
    r::table
        .filter(r::integration_id.eq(integration_id))
        .filter(r::status.eq(ReceiptStatus::Deferred))
        .count()
        .get_result(conn)
        .await
}

/// Stored while its integration is paused: answered 202, applied on resume. `proposal_id` is
/// the proposal its body names, read leniently (it is parsed only when applied). `at`: when
/// it was processed.
pub async fn record_deferred(
    conn: &mut AsyncPgConnection,
    id: i64,
    proposal_id: Option<&str>,
    at: DateTime<Utc>,
) -> QueryResult<()> {
    diesel::update(r::table.find(id))
        .set((
            r::status.eq(ReceiptStatus::Deferred),
            r::http_status.eq(Some(202i16)),
            r::error_code.eq(None::<String>),
            r::error_detail.eq(None::<String>),
            r::proposal_id.eq(proposal_id.map(|p| p.replace('\0', "\\u0000"))),
            r::attempts.eq(r::attempts + 1),
            r::processed_at.eq(Some(at)),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

/// What a receipt keeps of a callback answered 200.
#[derive(Debug, Clone, Copy)]
pub struct Answered<'a> {
    pub outcome: Outcome,
    /// None for an `ignored` event.
    pub proposal_id: Option<&'a str>,
    pub dedup_key: Option<&'a str>,
    /// The insurer's event time; none for an `ignored` event.
    pub event_at: Option<DateTime<Utc>>,
}

/// The outcome of a callback answered 200, processed at `at`.
pub async fn record_outcome(
    conn: &mut AsyncPgConnection,
    id: i64,
    answered: &Answered<'_>,
    at: DateTime<Utc>,
) -> QueryResult<()> {
    cached_by_text(diesel::update(r::table.find(id)).set((
        r::status.eq(ReceiptStatus::from(answered.outcome)),
        r::http_status.eq(Some(200i16)),
        r::error_code.eq(None::<String>),
        r::error_detail.eq(None::<String>),
        r::proposal_id.eq(answered.proposal_id),
        r::dedup_key.eq(answered.dedup_key),
        r::event_at.eq(answered.event_at),
        r::attempts.eq(r::attempts + 1),
        r::processed_at.eq(Some(at)),
    )))
    .execute(conn)
    .await?;
    Ok(())
}

/// What a receipt keeps of the answer to a callback that failed.
#[derive(Debug, Clone)]
pub struct Failure {
    pub http_status: i16,
    pub code: String,
    pub detail: String,
    pub proposal_id: Option<String>,
}

/// The answer to a callback that failed, processed at `at`.
pub async fn record_failure(
    conn: &mut AsyncPgConnection,
    id: i64,
    failure: &Failure,
    at: DateTime<Utc>,
) -> QueryResult<()> {
    // Text columns cannot hold NUL: a detail or id quoting the sender's bytes must never make
    // this write fail (the parsers refuse NUL first; this is the second line).
    let storable = |s: &str| s.replace('\0', "\\u0000");
    diesel::update(r::table.find(id))
        .set((
            r::status.eq(ReceiptStatus::Failed),
            r::http_status.eq(Some(failure.http_status)),
            r::error_code.eq(Some(storable(&failure.code))),
            r::error_detail.eq(Some(storable(&failure.detail))),
            r::proposal_id.eq(failure.proposal_id.as_deref().map(storable)),
            r::attempts.eq(r::attempts + 1),
            r::processed_at.eq(Some(at)),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

/// Ids of receipts a crash left `received` (stored before `cutoff`, no outcome yet), oldest
/// first, at most `limit`.
pub async fn left_received(
    conn: &mut AsyncPgConnection,
    cutoff: DateTime<Utc>,
    limit: i64,
) -> QueryResult<Vec<i64>> {
    r::table
        .filter(r::status.eq(ReceiptStatus::Received))
        .filter(r::received_at.lt(cutoff))
        .order((r::received_at, r::id))
        .limit(limit)
        .select(r::id)
        .load(conn)
        .await
}

/// The receipt if it is still `received`, row-locked until the transaction ends; None when it
/// has an outcome by now or another sweeper holds it (`SKIP LOCKED`), so each receipt is
/// processed by one sweeper at a time, whatever the number of replicas.
pub async fn lock_if_received(
    conn: &mut AsyncPgConnection,
    id: i64,
) -> QueryResult<Option<Receipt>> {
    r::table
        .filter(r::id.eq(id))
        .filter(r::status.eq(ReceiptStatus::Received))
        .select(Receipt::as_select())
        .for_update()
        .skip_locked()
        .first(conn)
        .await
        .optional()
}

/// `prune`: deletes receipts received before `cutoff`, oldest first, `batch` at a time, each
/// batch its own statement and transaction (nothing long-held, so callbacks keep their pace);
/// `progress` hears the running total after each batch. Returns how many were deleted.
/// Deferred receipts are kept whatever their age: they are callbacks a paused integration has
/// not applied yet.
pub async fn prune(
    conn: &mut AsyncPgConnection,
    cutoff: DateTime<Utc>,
    batch: i64,
    mut progress: impl FnMut(usize),
) -> QueryResult<usize> {
    let mut total = 0;
    loop {
        // diesel's DSL cannot delete through a LIMITed subselect of the same table.
        let deleted = diesel::sql_query(
            "DELETE FROM proposal.callback_receipts WHERE id IN (
                 SELECT id FROM proposal.callback_receipts
                 WHERE received_at < $1 AND status <> 'deferred'
                 ORDER BY received_at, id LIMIT $2)",
        )
        .bind::<diesel::sql_types::Timestamptz, _>(cutoff)
        .bind::<diesel::sql_types::BigInt, _>(batch)
        .execute(conn)
        .await?;
        total += deleted;
        if deleted == 0 {
            return Ok(total);
        }
        progress(total);
    }
}

/// Erases, at `at`, the raw body of up to `batch` of `tenant`'s receipts received before
/// `cutoff` that have their outcome, oldest first; how many (docs/proposal-callback.md,
/// "Retention of raw bodies"). The body becomes empty and `body_erased_at` says when; every
/// other column stays. Receipts still `received` or `deferred` are kept whole: their body has
/// not been applied yet. One statement, its own transaction; the status is checked again on
/// the row it updates, so a receipt a replay defers meanwhile keeps its body.
pub async fn erase_bodies(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    cutoff: DateTime<Utc>,
    at: DateTime<Utc>,
    batch: i64,
) -> QueryResult<usize> {
    diesel::sql_query(
        "UPDATE proposal.callback_receipts SET body = ''::bytea, body_erased_at = $3
         WHERE status NOT IN ('received', 'deferred') AND body_erased_at IS NULL
           AND id IN (SELECT id FROM proposal.callback_receipts
                      WHERE tenant_id = $1 AND received_at < $2 AND body_erased_at IS NULL
                        AND status NOT IN ('received', 'deferred')
                      ORDER BY received_at, id LIMIT $4)",
    )
    .bind::<diesel::sql_types::Text, _>(tenant)
    .bind::<diesel::sql_types::Timestamptz, _>(cutoff)
    .bind::<diesel::sql_types::Timestamptz, _>(at)
    .bind::<diesel::sql_types::BigInt, _>(batch)
    .execute(conn)
    .await
}

/// When the newest receipt of one of `tenants` that came with the `User-Agent` `user_agent`
/// was received (the demo seed finds its own callbacks so); none when there is none. Walks
/// the received-time index from the newest.
pub async fn newest_received_with_agent(
    conn: &mut AsyncPgConnection,
    tenants: &[&str],
    user_agent: &str,
) -> QueryResult<Option<DateTime<Utc>>> {
    r::table
        .filter(r::tenant_id.eq_any(tenants.iter().copied()))
        .filter(
            diesel::dsl::sql::<diesel::sql_types::Bool>("headers->>'user-agent' = ")
                .bind::<diesel::sql_types::Text, _>(user_agent),
        )
        .order(r::received_at.desc())
        .select(r::received_at)
        .first(conn)
        .await
        .optional()
}
