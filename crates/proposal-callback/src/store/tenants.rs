//! The tenants (dsTenantId) this service receives callbacks for.

use diesel::QueryResult;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::sender::Sender;
use crate::domain::zone::{self, Tz};
use crate::schema::proposal::tenants;

pub async fn exists(conn: &mut AsyncPgConnection, id: &str) -> QueryResult<bool> {
    diesel::select(diesel::dsl::exists(tenants::table.find(id)))
        .get_result(conn)
        .await
}

/// A tenant as its admin reads and sets it.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = tenants)]
pub struct TenantRow {
    pub id: String,
    pub name: String,
    /// Where the tenant's operator is told when an insurer goes silent (none: nobody).
    pub operator_email: Option<String>,
    /// Its IANA time zone (`domain::zone`), a name the tz database knows.
    pub time_zone: String,
}

pub async fn find(conn: &mut AsyncPgConnection, id: &str) -> QueryResult<Option<TenantRow>> {
    tenants::table
        .find(id)
        .select(TenantRow::as_select())
        .first(conn)
        .await
        .optional()
}

/// Sets (or, with none, removes) the tenant's operator address; none when there is no such
/// tenant.
pub async fn set_operator_email(
    conn: &mut AsyncPgConnection,
    id: &str,
    operator_email: Option<&str>,
) -> QueryResult<Option<TenantRow>> {
    diesel::update(tenants::table.find(id))
        .set(tenants::operator_email.eq(operator_email))
        .returning(TenantRow::as_returning())
        .get_result(conn)
        .await
        .optional()
}

/// The tenant's time zone ([`zone::DEFAULT_ZONE`] for no such tenant).
pub async fn time_zone(conn: &mut AsyncPgConnection, id: &str) -> QueryResult<Tz> {
    let name: Option<String> = tenants::table
        .find(id)
        .select(tenants::time_zone)
        .first(conn)
        .await
        .optional()?;
    Ok(name.map_or(zone::DEFAULT_ZONE, |n| zone::stored(&n)))
}

/// Sets the tenant's time zone, one [`zone::parse`] accepted; none when there is no such
/// tenant.
pub async fn set_time_zone(
    conn: &mut AsyncPgConnection,
    id: &str,
    time_zone: Tz,
) -> QueryResult<Option<TenantRow>> {
    diesel::update(tenants::table.find(id))
        .set(tenants::time_zone.eq(time_zone.name()))
        .returning(TenantRow::as_returning())
        .get_result(conn)
        .await
        .optional()
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

/// The tenant's sender (all none: `EMAIL_FROM`); none for no such tenant.
pub async fn sender(conn: &mut AsyncPgConnection, id: &str) -> QueryResult<Option<Sender>> {
    let row: Option<(Option<String>, Option<String>, Option<String>)> = tenants::table
        .find(id)
        .select((tenants::from_name, tenants::from_address, tenants::reply_to))
        .first(conn)
        .await
        .optional()?;
    Ok(row.map(|(n, a, r)| Sender::stored(n.as_deref(), a.as_deref(), r.as_deref())))
}

/// Sets the tenant's sender (emails queued from now on carry it); false for no such tenant.
pub async fn set_sender(
    conn: &mut AsyncPgConnection,
    id: &str,
    sender: &Sender,
) -> QueryResult<bool> {
    diesel::update(tenants::table.find(id))
        .set((
            tenants::from_name.eq(sender.from_name()),
            tenants::from_address.eq(sender.from_address()),
            tenants::reply_to.eq(sender.reply_to()),
        ))
        .execute(conn)
        .await
        .map(|n| n == 1)
}
