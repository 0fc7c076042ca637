//! The access log's statements (docs/dispatch-access-log.md): a batch appended as one row,
//! the two listings, and the retention's DELETE.

use chrono::{DateTime, Utc};
use common::db::cached_by_text;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::access::AccessRoute;
use crate::schema::dispatch::patient_access_batches;
use crate::store::error::StoreError as Error;
use crate::store::read::{AccessEntry, AccessLogPage, UserOption};

/// The most entries one listing answers.
pub const PAGE: i64 = 1000;

/// One read to record.
#[derive(Debug, Clone, PartialEq)]
pub struct Access {
    pub incident_id: i64,
    pub user_id: i64,
    pub route: &'static str,
    pub at: DateTime<Utc>,
}

/// The batch as one row of four arrays (docs/dispatch-access-log.md, "How it is stored"): one
/// statement text whatever the batch's size, so it stays prepared on the connection
/// (`common::db::cached_by_text`) instead of being parsed and planned for every batch. The
/// batch's first and last times are the database's own reading of `ats`.
const APPEND: &str = "INSERT INTO dispatch.patient_access_batches \
     (first_at, last_at, incident_ids, user_ids, routes, ats) \
     SELECT min(a), max(a), $1::int8[], $2::int8[], $3::text[], $4::timestamptz[] \
     FROM unnest($4::timestamptz[]) AS a";

/// Appends a batch in one statement (one row).
pub async fn append(mut conn: &AsyncPgConnection, batch: &[Access]) -> Result<usize, Error> {
    let incident_ids: Vec<i64> = batch.iter().map(|a| a.incident_id).collect();
    let user_ids: Vec<i64> = batch.iter().map(|a| a.user_id).collect();
    let routes: Vec<&str> = batch.iter().map(|a| a.route).collect();
    let ats: Vec<DateTime<Utc>> = batch.iter().map(|a| a.at).collect();
    cached_by_text(
        diesel::sql_query(APPEND)
            .bind::<Array<BigInt>, _>(incident_ids)
            .bind::<Array<BigInt>, _>(user_ids)
            .bind::<Array<Text>, _>(routes)
            .bind::<Array<Timestamptz>, _>(ats),
    )
    .execute(&mut conn)
    .await?;
    Ok(batch.len())
}

/// Removes the batches whose every entry is older than `before` (the retention; a batch
/// straddling `before` stays until its last entry is past it); how many entries.
pub async fn prune(mut conn: &AsyncPgConnection, before: DateTime<Utc>) -> Result<usize, Error> {
    let removed: Vec<i32> = diesel::delete(
        patient_access_batches::table.filter(patient_access_batches::last_at.lt(before)),
    )
    .returning(diesel::dsl::sql::<diesel::sql_types::Integer>(
        "cardinality(incident_ids)",
    ))
    .get_results(&mut conn)
    .await?;
    Ok(removed.iter().map(|&n| n as usize).sum())
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Timestamptz)]
    at: DateTime<Utc>,
    #[diesel(sql_type = BigInt)]
    user_id: i64,
    #[diesel(sql_type = Text)]
    descriptive_name: String,
    #[diesel(sql_type = BigInt)]
    incident_id: i64,
    #[diesel(sql_type = Text)]
    number: String,
    #[diesel(sql_type = Text)]
    route: AccessRoute,
}

fn page(mut rows: Vec<Row>) -> AccessLogPage {
    let truncated = rows.len() as i64 > PAGE;
    rows.truncate(PAGE as usize);
    AccessLogPage {
        entries: rows
            .into_iter()
            .map(|row| AccessEntry {
                at: row.at,
                user: UserOption {
                    id: row.user_id,
                    descriptive_name: row.descriptive_name,
                },
                incident_id: row.incident_id,
                incident_number: row.number,
                route: row.route,
            })
            .collect(),
        truncated,
    }
}

/// The entries of the batches the GIN index found, one row each, then those of the listing's
/// incident or user; oldest first. The log has no foreign keys (docs/dispatch-access-log.md,
/// "Consistency without foreign keys"): the joins name their columns. `$2` is the route or
/// null, `$3` the page plus one (to tell it was truncated).
macro_rules! listing {
    ($batches:literal, $entries:literal) => {
        concat!(
            "SELECT e.at, u.id AS user_id, u.descriptive_name, i.id AS incident_id, i.number, e.route \
             FROM dispatch.patient_access_batches b \
             CROSS JOIN LATERAL unnest(b.incident_ids, b.user_ids, b.routes, b.ats) \
                  WITH ORDINALITY AS e (incident_id, user_id, route, at, position) \
             JOIN dispatch.users u ON u.id = e.user_id \
             JOIN dispatch.incidents i ON i.id = e.incident_id \
             WHERE ",
            $batches,
            " AND ",
            $entries,
            " AND ($2::text IS NULL OR e.route = $2) \
             ORDER BY e.at, b.id, e.position LIMIT $3"
        )
    };
}

const OF_INCIDENT: &str = listing!("b.incident_ids @> ARRAY[$1::int8]", "e.incident_id = $1");

const OF_USER: &str = listing!(
    "b.user_ids @> ARRAY[$1::int8] AND b.last_at >= $4 AND b.first_at < $5",
    "e.user_id = $1 AND e.at >= $4 AND e.at < $5"
);

/// Who read incident `id` (through `route`, when given), oldest first.
pub async fn of_incident(
    mut conn: &AsyncPgConnection,
    id: i64,
    route: Option<AccessRoute>,
) -> Result<AccessLogPage, Error> {
    let rows: Vec<Row> = cached_by_text(
        diesel::sql_query(OF_INCIDENT)
            .bind::<BigInt, _>(id)
            .bind::<Nullable<Text>, _>(route)
            .bind::<BigInt, _>(PAGE + 1),
    )
    .load(&mut conn)
    .await?;
    Ok(page(rows))
}

/// What user `id` read in `[from, to)` (through `route`, when given), oldest first.
pub async fn of_user(
    mut conn: &AsyncPgConnection,
    id: i64,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    route: Option<AccessRoute>,
) -> Result<AccessLogPage, Error> {
    let rows: Vec<Row> = cached_by_text(
        diesel::sql_query(OF_USER)
            .bind::<BigInt, _>(id)
            .bind::<Nullable<Text>, _>(route)
            .bind::<BigInt, _>(PAGE + 1)
            .bind::<Timestamptz, _>(from)
            .bind::<Timestamptz, _>(to),
    )
    .load(&mut conn)
    .await?;
    Ok(page(rows))
}
