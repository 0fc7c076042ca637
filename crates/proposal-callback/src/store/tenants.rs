//! The tenants (dsTenantId) this service receives callbacks for.

use diesel::QueryResult;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::schema::proposal::tenants;

pub async fn exists(conn: &mut AsyncPgConnection, id: &str) -> QueryResult<bool> {
    diesel::select(diesel::dsl::exists(tenants::table.find(id)))
        .get_result(conn)
        .await
}

/// How many days each tenant keeps the raw bodies of its receipts, by tenant id.
pub async fn body_retention(conn: &mut AsyncPgConnection) -> QueryResult<Vec<(String, i32)>> {
    tenants::table
        .order(tenants::id)
        .select((tenants::id, tenants::body_retention_days))
        .load(conn)
        .await
}

/// The tenant's body retention in days; none for no such tenant.
pub async fn body_retention_days(
    conn: &mut AsyncPgConnection,
    id: &str,
) -> QueryResult<Option<i32>> {
    tenants::table
        .find(id)
        .select(tenants::body_retention_days)
        .first(conn)
        .await
        .optional()
}

/// Sets the tenant's body retention (the table's check keeps it within 1..=3650 days); false
/// for no such tenant.
pub async fn set_body_retention_days(
    conn: &mut AsyncPgConnection,
    id: &str,
    days: i32,
) -> QueryResult<bool> {
    diesel::update(tenants::table.find(id))
        .set(tenants::body_retention_days.eq(days))
        .execute(conn)
        .await
        .map(|n| n == 1)
}
