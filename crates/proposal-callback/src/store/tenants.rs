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
