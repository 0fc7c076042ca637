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

/// The tenant's name (what its customers call it), if the tenant exists.
pub async fn name(conn: &mut AsyncPgConnection, id: &str) -> QueryResult<Option<String>> {
    tenants::table
        .find(id)
        .select(tenants::name)
        .first(conn)
        .await
        .optional()
}
