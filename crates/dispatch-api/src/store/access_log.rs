//! The access log's statements (docs/dispatch-access-log.md): a batch appended in one
//! INSERT, the two listings, and the retention's DELETE.

use chrono::{DateTime, Utc};
use common::db::cached_by_text;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::access::AccessRoute;
use crate::schema::dispatch::{incidents, patient_access_log, users};
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

/// The batch as four arrays turned back into rows: one statement text whatever the batch's
/// size, so it stays prepared on the connection (`common::db::cached_by_text`) instead of being parsed
/// and planned for every batch.
const APPEND: &str = "INSERT INTO dispatch.patient_access_log (incident_id, user_id, route, at) \
     SELECT * FROM unnest($1::int8[], $2::int8[], $3::text[], $4::timestamptz[])";

/// Appends a batch in one statement.
pub async fn append(mut conn: &AsyncPgConnection, batch: &[Access]) -> Result<usize, Error> {
    let incident_ids: Vec<i64> = batch.iter().map(|a| a.incident_id).collect();
    let user_ids: Vec<i64> = batch.iter().map(|a| a.user_id).collect();
    let routes: Vec<&str> = batch.iter().map(|a| a.route).collect();
    let ats: Vec<DateTime<Utc>> = batch.iter().map(|a| a.at).collect();
    Ok(cached_by_text(
        diesel::sql_query(APPEND)
            .bind::<Array<BigInt>, _>(incident_ids)
            .bind::<Array<BigInt>, _>(user_ids)
            .bind::<Array<Text>, _>(routes)
            .bind::<Array<Timestamptz>, _>(ats),
    )
    .execute(&mut conn)
    .await?)
}

/// Removes the entries older than `before` (the retention); how many.
pub async fn prune(mut conn: &AsyncPgConnection, before: DateTime<Utc>) -> Result<usize, Error> {
    Ok(
        diesel::delete(patient_access_log::table.filter(patient_access_log::at.lt(before)))
            .execute(&mut conn)
            .await?,
    )
}

type Row = (DateTime<Utc>, i64, String, i64, String, AccessRoute);

fn page(mut rows: Vec<Row>) -> AccessLogPage {
    let truncated = rows.len() as i64 > PAGE;
    rows.truncate(PAGE as usize);
    AccessLogPage {
        entries: rows
            .into_iter()
            .map(
                |(at, user_id, name, incident_id, number, route)| AccessEntry {
                    at,
                    user: UserOption {
                        id: user_id,
                        descriptive_name: name,
                    },
                    incident_id,
                    incident_number: number,
                    route,
                },
            )
            .collect(),
        truncated,
    }
}

// The log has no foreign keys (docs/dispatch-access-log.md, "Consistency without foreign
// keys"): the joins name their columns.
macro_rules! listing {
    () => {
        patient_access_log::table
            .inner_join(users::table.on(users::id.eq(patient_access_log::user_id)))
            .inner_join(incidents::table.on(incidents::id.eq(patient_access_log::incident_id)))
            .select((
                patient_access_log::at,
                users::id,
                users::descriptive_name,
                incidents::id,
                incidents::number,
                patient_access_log::route,
            ))
            .order_by((patient_access_log::at, patient_access_log::id))
            .limit(PAGE + 1)
    };
}

/// Who read incident `id` (through `route`, when given), oldest first.
pub async fn of_incident(
    mut conn: &AsyncPgConnection,
    id: i64,
    route: Option<AccessRoute>,
) -> Result<AccessLogPage, Error> {
    let mut query = listing!()
        .filter(patient_access_log::incident_id.eq(id))
        .into_boxed();
    if let Some(route) = route {
        query = query.filter(patient_access_log::route.eq(route));
    }
    let rows: Vec<Row> = query.load(&mut conn).await?;
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
    let mut query = listing!()
        .filter(patient_access_log::user_id.eq(id))
        .filter(patient_access_log::at.ge(from))
        .filter(patient_access_log::at.lt(to))
        .into_boxed();
    if let Some(route) = route {
        query = query.filter(patient_access_log::route.eq(route));
    }
    let rows: Vec<Row> = query.load(&mut conn).await?;
    Ok(page(rows))
}
