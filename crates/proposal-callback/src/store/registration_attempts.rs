//! RegisterCallback attempts and how each ended (docs/proposal-callback.md, "Registering the
//! callback"): one row per attempt that reached the insurer or found it not configured, so
//! an operator sees the last one beside its integration.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::QueryResult;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::schema::proposal::{integrations, registration_attempts as a};

/// `outcome` of an attempt the insurer accepted (any other outcome is the error's code).
pub const REGISTERED: &str = "registered";

/// How one attempt ended.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = a)]
pub struct AttemptRow {
    pub integration_id: i64,
    /// When the operator asked for it.
    pub started_at: DateTime<Utc>,
    /// When its outcome was recorded.
    pub finished_at: DateTime<Utc>,
    /// [`REGISTERED`], or the error code (`insurer_rejected`, `not_configured`, ...).
    pub outcome: String,
    /// The insurer's HTTP status, when it answered.
    pub insurer_status: Option<i16>,
    /// What the operator was told when it failed.
    pub detail: Option<String>,
    /// Who asked (the admin token's `sub`).
    pub admin: String,
}

/// An attempt to record.
#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = a)]
pub struct NewAttempt<'a> {
    pub integration_id: i64,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
    pub outcome: &'a str,
    pub insurer_status: Option<i16>,
    pub detail: Option<&'a str>,
    pub admin: &'a str,
}

pub async fn record(conn: &mut AsyncPgConnection, attempt: &NewAttempt<'_>) -> QueryResult<()> {
    diesel::insert_into(a::table)
        .values(attempt)
        .execute(conn)
        .await?;
    Ok(())
}

/// The latest attempt of one integration.
pub async fn latest(
    conn: &mut AsyncPgConnection,
    integration_id: i64,
) -> QueryResult<Option<AttemptRow>> {
    a::table
        .filter(a::integration_id.eq(integration_id))
        .order(a::id.desc())
        .select(AttemptRow::as_select())
        .first(conn)
        .await
        .optional()
}

/// The latest attempt of each of `tenant`'s integrations that had one, by integration id.
pub async fn latest_of_tenant(
    conn: &mut AsyncPgConnection,
    tenant: &str,
) -> QueryResult<HashMap<i64, AttemptRow>> {
    let rows: Vec<AttemptRow> = a::table
        .inner_join(integrations::table)
        .filter(integrations::tenant_id.eq(tenant))
        .distinct_on(a::integration_id)
        .order((a::integration_id, a::id.desc()))
        .select(AttemptRow::as_select())
        .load(conn)
        .await?;
    Ok(rows.into_iter().map(|r| (r.integration_id, r)).collect())
}
