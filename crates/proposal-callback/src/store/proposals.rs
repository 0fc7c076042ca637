//! Proposals, their integration history, their events and the dedup keys of applied callbacks.

use chrono::{DateTime, Utc};
use common::db::cached_by_text;
use diesel::QueryResult;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::insurer::Callback;
use crate::domain::insurer::Insurer;
use crate::domain::status::Status;
use crate::schema::proposal::{applied_callbacks, integration_history, proposal_events, proposals};
use crate::store::receipts::Receipt;

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = proposals)]
pub struct ProposalRow {
    pub id: i64,
    pub tenant_id: String,
    pub proposal_id: String,
    pub status: Status,
    pub contact_email: String,
    pub in_queue: bool,
    /// The insurer's event time of the last callback applied to it (none yet: null).
    pub last_event_at: Option<DateTime<Utc>>,
}

/// The proposal, row-locked until the transaction ends, with its tenant's name (what the
/// email calls the tenant; read, not locked: one statement instead of two per callback).
pub async fn lock(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    proposal_id: &str,
) -> QueryResult<Option<(ProposalRow, Option<String>)>> {
    // One text whatever the tenant: kept prepared (common::db::cached_by_text) despite the literal.
    cached_by_text(
        proposals::table
            .filter(proposals::tenant_id.eq(tenant))
            .filter(proposals::proposal_id.eq(proposal_id))
            .select((
                ProposalRow::as_select(),
                diesel::dsl::sql::<diesel::sql_types::Nullable<diesel::sql_types::Text>>(
                    "(SELECT t.name FROM proposal.tenants t WHERE t.id = proposals.tenant_id)",
                ),
            ))
            .for_update()
            .limit(1),
    )
    .get_result(conn)
    .await
    .optional()
}

/// Creates an `under_analysis` proposal, created at `at`, unless the tenant already has one
/// by that id. True when it was created.
pub async fn insert_if_absent(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    proposal_id: &str,
    contact_email: &str,
    at: DateTime<Utc>,
) -> QueryResult<bool> {
    let n = diesel::insert_into(proposals::table)
        .values((
            proposals::tenant_id.eq(tenant),
            proposals::proposal_id.eq(proposal_id),
            proposals::status.eq(Status::UnderAnalysis),
            proposals::contact_email.eq(contact_email),
            proposals::in_queue.eq(true),
            proposals::created_at.eq(at),
            proposals::updated_at.eq(at),
        ))
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    Ok(n == 1)
}

/// True when this callback's key was not applied before (claimed at `at`). Inside the
/// applying transaction, so a rollback frees the key again.
pub async fn claim_dedup_key(
    conn: &mut AsyncPgConnection,
    receipt: &Receipt,
    proposal_pk: i64,
    key: &str,
    status: Status,
    at: DateTime<Utc>,
) -> QueryResult<bool> {
    let n = diesel::insert_into(applied_callbacks::table)
        .values((
            applied_callbacks::tenant_id.eq(&receipt.tenant_id),
            applied_callbacks::insurer.eq(receipt.insurer),
            applied_callbacks::dedup_key.eq(key),
            applied_callbacks::proposal_id.eq(proposal_pk),
            applied_callbacks::receipt_id.eq(Some(receipt.id)),
            applied_callbacks::status.eq(status),
            applied_callbacks::created_at.eq(at),
        ))
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    Ok(n == 1)
}

/// The new status, and `event_at` as the last applied event time (the caller has checked it
/// is not older than the current one); `at` is when the change was made.
pub async fn set_status(
    conn: &mut AsyncPgConnection,
    id: i64,
    to: Status,
    event_at: DateTime<Utc>,
    at: DateTime<Utc>,
) -> QueryResult<()> {
    cached_by_text(diesel::update(proposals::table.find(id)).set((
        proposals::status.eq(to),
        proposals::in_queue.eq(to.in_queue()),
        proposals::last_event_at.eq(Some(event_at)),
        proposals::updated_at.eq(at),
    )))
    .execute(conn)
    .await?;
    Ok(())
}

/// Records `event_at` as the last applied event time, for a callback that confirmed the
/// status the proposal already had (`unchanged`): the status stays, the time moves on.
pub async fn set_last_event_at(
    conn: &mut AsyncPgConnection,
    id: i64,
    event_at: DateTime<Utc>,
) -> QueryResult<()> {
    cached_by_text(
        diesel::update(proposals::table.find(id)).set(proposals::last_event_at.eq(Some(event_at))),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// The transition's history row, recorded at `at`.
pub async fn insert_history(
    conn: &mut AsyncPgConnection,
    proposal_pk: i64,
    receipt: &Receipt,
    from: Status,
    callback: &Callback,
    at: DateTime<Utc>,
) -> QueryResult<i64> {
    diesel::insert_into(integration_history::table)
        .values((
            integration_history::proposal_id.eq(proposal_pk),
            integration_history::insurer.eq(receipt.insurer),
            integration_history::receipt_id.eq(Some(receipt.id)),
            integration_history::from_status.eq(from),
            integration_history::to_status.eq(callback.status),
            integration_history::insurer_event_id.eq(callback.event_id.as_deref()),
            integration_history::insurer_note.eq(callback.note.as_deref()),
            integration_history::insurer_time.eq(callback.occurred_at),
            integration_history::created_at.eq(at),
        ))
        .returning(integration_history::id)
        .get_result(conn)
        .await
}

/// An event to record on a proposal.
pub struct Event {
    pub kind: &'static str,
    pub data: serde_json::Value,
}

impl Event {
    pub fn new(kind: &'static str, data: serde_json::Value) -> Self {
        Self { kind, data }
    }
}

pub fn received_event(receipt: &Receipt, callback: &Callback) -> Event {
    Event::new(
        "callback_received",
        serde_json::json!({
            "insurer": receipt.insurer,
            "status": callback.status,
            "event_id": callback.event_id,
        }),
    )
}

/// The events as two arrays turned back into rows, in their order: one statement text
/// whatever their number, so it stays prepared on the connection
/// (`common::db::cached_by_text`); an insert of a `Vec` of rows would have one text per
/// number of events.
const INSERT_EVENTS: &str = r#"INSERT INTO "proposal"."proposal_events" (proposal_id, kind, receipt_id, data, created_at) SELECT $1, e.kind, $2, e.data, $3 FROM unnest($4::text[], $5::jsonb[]) WITH ORDINALITY AS e(kind, data, n) ORDER BY e.n"#;

/// The proposal's events, all recorded at `at`.
pub async fn insert_events(
    conn: &mut AsyncPgConnection,
    proposal_pk: i64,
    receipt_id: i64,
    events: &[Event],
    at: DateTime<Utc>,
) -> QueryResult<()> {
    use diesel::sql_types::{Array, BigInt, Jsonb, Text, Timestamptz};
    let kinds: Vec<&str> = events.iter().map(|e| e.kind).collect();
    let data: Vec<&serde_json::Value> = events.iter().map(|e| &e.data).collect();
    cached_by_text(
        diesel::sql_query(INSERT_EVENTS)
            .bind::<BigInt, _>(proposal_pk)
            .bind::<BigInt, _>(receipt_id)
            .bind::<Timestamptz, _>(at)
            .bind::<Array<Text>, _>(kinds)
            .bind::<Array<Jsonb>, _>(data),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Everything an operator sees of a proposal itself.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = proposals)]
pub struct ProposalDetail {
    pub id: i64,
    pub proposal_id: String,
    pub status: Status,
    pub contact_email: String,
    pub in_queue: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub last_event_at: Option<DateTime<Utc>>,
}

/// The tenant's proposal by the id the tenant knows it by.
pub async fn find_detail(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    proposal_id: &str,
) -> QueryResult<Option<ProposalDetail>> {
    proposals::table
        .filter(proposals::tenant_id.eq(tenant))
        .filter(proposals::proposal_id.eq(proposal_id))
        .select(ProposalDetail::as_select())
        .first(conn)
        .await
        .optional()
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = integration_history)]
pub struct HistoryRow {
    pub id: i64,
    pub insurer: Insurer,
    pub receipt_id: Option<i64>,
    pub from_status: Status,
    pub to_status: Status,
    pub insurer_event_id: Option<String>,
    pub insurer_note: Option<String>,
    pub insurer_time: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

/// The proposal's last `limit` history rows, oldest first.
pub async fn history(
    conn: &mut AsyncPgConnection,
    proposal_pk: i64,
    limit: i64,
) -> QueryResult<Vec<HistoryRow>> {
    let mut rows: Vec<HistoryRow> = integration_history::table
        .filter(integration_history::proposal_id.eq(proposal_pk))
        .order(integration_history::id.desc())
        .limit(limit)
        .select(HistoryRow::as_select())
        .load(conn)
        .await?;
    rows.reverse();
    Ok(rows)
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = proposal_events)]
pub struct EventRow {
    pub id: i64,
    pub kind: String,
    pub receipt_id: Option<i64>,
    pub data: serde_json::Value,
    pub created_at: DateTime<Utc>,
}

/// The proposal's last `limit` events, oldest first.
pub async fn events(
    conn: &mut AsyncPgConnection,
    proposal_pk: i64,
    limit: i64,
) -> QueryResult<Vec<EventRow>> {
    let mut rows: Vec<EventRow> = proposal_events::table
        .filter(proposal_events::proposal_id.eq(proposal_pk))
        .order(proposal_events::id.desc())
        .limit(limit)
        .select(EventRow::as_select())
        .load(conn)
        .await?;
    rows.reverse();
    Ok(rows)
}

/// The status of the tenant's proposal by the id the tenant knows it by; none for no such
/// proposal.
pub async fn status_of(
    conn: &mut AsyncPgConnection,
    tenant: &str,
    proposal_id: &str,
) -> QueryResult<Option<Status>> {
    proposals::table
        .filter(proposals::tenant_id.eq(tenant))
        .filter(proposals::proposal_id.eq(proposal_id))
        .select(proposals::status)
        .first(conn)
        .await
        .optional()
}
