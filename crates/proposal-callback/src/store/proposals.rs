//! Proposals, their integration history, their events and the dedup keys of applied callbacks.

use chrono::{DateTime, Utc};
use common::db::cached_by_text;
use diesel::QueryResult;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::insurer::Callback;
use crate::domain::insurer::Insurer;
use crate::domain::status::Status;
use crate::schema::proposal::{integration_history, proposal_events, proposals};
use crate::store::receipts::Receipt;

#[derive(Debug, Clone, Queryable, QueryableByName, Selectable)]
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

/// What [`lock_for_callback`] found.
#[derive(Debug, Clone)]
pub enum Locked {
    /// The integration is paused: nothing was locked but its row (shared), nothing claimed.
    Paused,
    /// The tenant has no proposal by that id: nothing claimed.
    NotFound,
    /// The proposal, row-locked until the transaction ends, with its tenant's name (what the
    /// email calls the tenant; read, not locked), and whether this callback's redelivery key
    /// was claimed now (false: it was applied before, a `duplicate`).
    Found {
        proposal: ProposalRow,
        tenant_name: Option<String>,
        claimed: bool,
    },
}

/// The row [`LOCK_FOR_CALLBACK`] answers: always one, its proposal's columns null when none
/// was locked.
#[derive(QueryableByName)]
struct LockedRow {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    paused: bool,
    #[diesel(embed)]
    proposal: Option<ProposalRow>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    tenant_name: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    claimed: bool,
}

/// One statement for what a callback reads before it writes (docs/proposal-callback.md,
/// "The callback, in order", steps 9 and 10), in this order:
///
/// 1. `i`: the integration `$1` (null: none to check) read under `FOR KEY SHARE`, held until
///    the transaction ends; paused or not (flow::pause);
/// 2. `p`: unless paused, the proposal locked `FOR UPDATE`, with its tenant's name. The pause
///    is a one-time filter on the proposal's scan, so PostgreSQL evaluates it, and takes the
///    integration's lock, before it scans or locks any proposal: the locks are taken in the
///    order pause and resume take them (no deadlock), and a paused integration's callback
///    locks no proposal;
/// 3. `k`: the redelivery key claimed for that proposal (`ON CONFLICT DO NOTHING`); it reads
///    the locked row, so it runs after the lock (docs/proposal-callback.md, "Exactly once").
///
/// One text whatever its input: kept prepared (`common::db::cached_by_text`).
const LOCK_FOR_CALLBACK: &str = r#"WITH i AS MATERIALIZED (
    SELECT paused_at IS NOT NULL AS paused FROM "proposal"."integrations" WHERE id = $1 FOR KEY SHARE
), p AS (
    SELECT p.id, p.tenant_id, p.proposal_id, p.status, p.contact_email, p.in_queue, p.last_event_at,
           (SELECT t.name FROM "proposal"."tenants" t WHERE t.id = p.tenant_id) AS tenant_name
    FROM "proposal"."proposals" p
    WHERE p.tenant_id = $2 AND p.proposal_id = $3 AND NOT coalesce((SELECT paused FROM i), false)
    FOR UPDATE OF p
), k AS (
    INSERT INTO "proposal"."applied_callbacks" (tenant_id, insurer, dedup_key, proposal_id, receipt_id, status, created_at)
    SELECT $2, $4, $5, p.id, $6, $7, $8 FROM p
    ON CONFLICT DO NOTHING
    RETURNING 1
)
SELECT coalesce((SELECT paused FROM i), false) AS paused, p.*, EXISTS (SELECT FROM k) AS claimed
FROM (SELECT) AS one LEFT JOIN p ON true"#;

/// For `receipt`'s `callback`, claimed at `at` under redelivery `key`, in the caller's transaction and one statement
/// ([`LOCK_FOR_CALLBACK`]): unless `integration` (the receipt's, held shared until the
/// transaction ends; none for a resume step, which holds it alone) is paused, the proposal
/// row-locked and the key claimed. The claim is rolled back with the transaction, so a
/// failing callback leaves its key free. A racing twin waits on the proposal's lock and then
/// finds the key taken.
pub async fn lock_for_callback(
    conn: &mut AsyncPgConnection,
    integration: Option<i64>,
    receipt: &Receipt,
    callback: &Callback,
    key: &str,
    at: DateTime<Utc>,
) -> QueryResult<Locked> {
    use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz};
    let row: LockedRow = cached_by_text(
        diesel::sql_query(LOCK_FOR_CALLBACK)
            .bind::<Nullable<BigInt>, _>(integration)
            .bind::<Text, _>(&receipt.tenant_id)
            .bind::<Text, _>(&callback.proposal_id)
            .bind::<Text, _>(receipt.insurer)
            .bind::<Text, _>(key)
            .bind::<Nullable<BigInt>, _>(Some(receipt.id))
            .bind::<Text, _>(callback.status)
            .bind::<Timestamptz, _>(at),
    )
    .get_result(conn)
    .await?;
    Ok(match row {
        LockedRow { paused: true, .. } => Locked::Paused,
        LockedRow {
            proposal: Some(proposal),
            tenant_name,
            claimed,
            ..
        } => Locked::Found {
            proposal,
            tenant_name,
            claimed,
        },
        LockedRow { proposal: None, .. } => Locked::NotFound,
    })
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
