//! The access log's writer and table (docs/dispatch-access-log.md): batches written off the
//! request path, the retention, and the table refusing to be rewritten. The writer is
//! driven directly here, as the routes' one recording path (`routes::recorded`) drives it.
#![allow(clippy::disallowed_methods)]

use chrono::{Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::access_log::{AccessLog, AccessLogSettings};
use dispatch_api::schema::dispatch::{incidents, patient_access_log, users};

use crate::support::Api;

/// (incident, user, route) of every entry, oldest first.
async fn entries(api: &Api) -> Vec<(i64, i64, String)> {
    patient_access_log::table
        .select((
            patient_access_log::incident_id,
            patient_access_log::user_id,
            patient_access_log::route,
        ))
        .order_by((patient_access_log::at, patient_access_log::id))
        .load(&mut api.conn().await)
        .await
        .unwrap()
}

/// The ids of the demo's first `n` incidents.
async fn first_incidents(api: &Api, n: i64) -> Vec<i64> {
    incidents::table
        .select(incidents::id)
        .order_by(incidents::id)
        .limit(n)
        .load(&mut api.conn().await)
        .await
        .unwrap()
}

/// Records the reads `range` by `user`, of `ids` in turn, each `step` after the one before
/// from `t0`.
async fn record_reads(
    log: &AccessLog,
    user: i64,
    ids: &[i64],
    range: std::ops::Range<usize>,
    route: &'static str,
    (t0, step): (chrono::DateTime<Utc>, Duration),
) {
    for i in range {
        log.record(user, ids[i % ids.len()], route, t0 + step * i as i32)
            .await;
    }
}

#[actix_web::test]
async fn a_burst_is_written_whole_and_the_retention_removes_only_what_is_past_it() {
    let api = Api::new().await;
    let ids = first_incidents(&api, 3).await;
    let user = api.id("regulador");
    let log = AccessLog::start(
        api.db.pool(),
        AccessLogSettings {
            retention: std::time::Duration::from_secs(3600),
            batch: 7,
            ..AccessLogSettings::default()
        },
    );
    // A burst larger than a batch, two hours old when the last entry comes.
    let t0 = Utc::now() - Duration::days(1);
    let second = (t0, Duration::seconds(1));
    record_reads(&log, user, &ids, 0..20, "GET /incident/{id}", second).await;
    log.flush().await;
    let written = entries(&api).await;
    assert_eq!(written.len(), 20);
    assert_eq!(written[4], (ids[1], user, "GET /incident/{id}".to_owned()));
    // Two hours later (the log's own time): the burst is past the one-hour retention.
    log.record(
        user,
        ids[0],
        "GET /incident/{id}/regulation",
        t0 + Duration::hours(2),
    )
    .await;
    log.flush().await;
    assert_eq!(
        entries(&api).await,
        vec![(ids[0], user, "GET /incident/{id}/regulation".to_owned())]
    );
}

#[actix_web::test]
async fn the_table_refuses_to_be_rewritten() {
    let api = Api::new().await;
    let id: i64 = incidents::table
        .select(incidents::id)
        .first(&mut api.conn().await)
        .await
        .unwrap();
    let log = AccessLog::start(api.db.pool(), AccessLogSettings::default());
    log.record(api.id("tarm"), id, "GET /incident/{id}", Utc::now())
        .await;
    log.flush().await;
    let mut conn = api.conn().await;
    for statement in [
        "UPDATE dispatch.patient_access_log SET route = 'nothing'",
        "TRUNCATE dispatch.patient_access_log",
    ] {
        let err = diesel::sql_query(statement)
            .execute(&mut conn)
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("append-only"),
            "{statement}: {err}"
        );
    }
    assert_eq!(
        entries(&api).await,
        vec![(id, api.id("tarm"), "GET /incident/{id}".to_owned())]
    );
}

/// Without foreign keys on the log (docs/dispatch-access-log.md, "Consistency without
/// foreign keys"), deleting an incident or a user it names is still refused, by the log's
/// own triggers; a user it does not name can be deleted.
#[actix_web::test]
async fn an_incident_or_a_user_the_log_names_cannot_be_deleted() {
    let api = Api::new().await;
    let mut conn = api.conn().await;
    let incident: i64 = incidents::table
        .select(incidents::id)
        .first(&mut conn)
        .await
        .unwrap();
    let profile: i32 = users::table
        .filter(users::id.eq(api.id("regulador")))
        .select(users::profile_id)
        .first(&mut conn)
        .await
        .unwrap();
    // Two people nothing else refers to: one reads the incident, the other reads nothing.
    let mut new_user = async |login: &str| -> i64 {
        diesel::insert_into(users::table)
            .values((
                users::login.eq(login),
                users::descriptive_name.eq(login),
                users::profile_id.eq(profile),
            ))
            .returning(users::id)
            .get_result(&mut conn)
            .await
            .unwrap()
    };
    let reader = new_user("leitor.auditoria").await;
    let bystander = new_user("sem.leituras").await;
    let log = AccessLog::start(api.db.pool(), AccessLogSettings::default());
    log.record(reader, incident, "GET /incident/{id}", Utc::now())
        .await;
    log.flush().await;

    let mut conn = api.conn().await;
    for (statement, named) in [
        (
            format!("DELETE FROM dispatch.users WHERE id = {reader}"),
            format!("user {reader} is named by patient_access_log: DELETE refused"),
        ),
        (
            format!("UPDATE dispatch.users SET id = 999999 WHERE id = {reader}"),
            format!("user {reader} is named by patient_access_log: UPDATE refused"),
        ),
        (
            format!("DELETE FROM dispatch.incidents WHERE id = {incident}"),
            format!("incident {incident} is named by patient_access_log: DELETE refused"),
        ),
    ] {
        let err = diesel::sql_query(&statement)
            .execute(&mut conn)
            .await
            .unwrap_err();
        assert!(err.to_string().contains(&named), "{statement}: {err}");
    }
    diesel::sql_query(format!("DELETE FROM dispatch.users WHERE id = {bystander}"))
        .execute(&mut conn)
        .await
        .unwrap();
    let left: Vec<i64> = users::table
        .filter(users::id.eq_any([reader, bystander]))
        .select(users::id)
        .load(&mut conn)
        .await
        .unwrap();
    assert_eq!(left, vec![reader]);
    assert_eq!(
        entries(&api).await,
        vec![(incident, reader, "GET /incident/{id}".to_owned())]
    );
}

#[derive(QueryableByName)]
struct Prepared {
    #[diesel(sql_type = diesel::sql_types::Text)]
    statement: String,
}

#[actix_web::test]
async fn batches_of_any_size_are_appended_by_one_statement_prepared_once() {
    use dispatch_api::store::access_log::{Access, append};

    let api = Api::new().await;
    let ids = first_incidents(&api, 2).await;
    let user = api.id("regulador");
    let t0 = Utc::now() - Duration::hours(1);
    let access = |i: usize, route: &'static str| Access {
        incident_id: ids[i % 2],
        user_id: user,
        route,
        at: t0 + Duration::seconds(i as i64),
    };
    let conn = api.conn().await;
    // Three batches of three sizes on one connection.
    let mut expected = Vec::new();
    for (first, size) in [(0, 1), (1, 5), (6, 3)] {
        let batch: Vec<Access> = (first..first + size)
            .map(|i| {
                access(
                    i,
                    if i % 3 == 0 {
                        "GET /incident/{id}/timeline"
                    } else {
                        "GET /incident/{id}"
                    },
                )
            })
            .collect();
        assert_eq!(append(&conn, &batch).await.unwrap(), size);
        expected.extend(
            batch
                .iter()
                .map(|a| (a.incident_id, a.user_id, a.route.to_owned())),
        );
    }
    assert_eq!(entries(&api).await, expected);
    // One statement text for the three sizes, prepared once on the connection.
    let appends: Vec<Prepared> = diesel::sql_query(
        "SELECT statement FROM pg_prepared_statements \
         WHERE statement LIKE 'INSERT INTO dispatch.patient_access_log%'",
    )
    .load(&mut &*conn)
    .await
    .unwrap();
    assert_eq!(
        appends.len(),
        1,
        "{:?}",
        appends.iter().map(|p| &p.statement).collect::<Vec<_>>()
    );
    assert!(
        appends[0].statement.contains("unnest($1::int8[]"),
        "{}",
        appends[0].statement
    );
}

/// How many transactions wrote the log's entries (each INSERT is one): the distinct `xmin`s.
async fn transactions(api: &Api) -> i64 {
    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    diesel::sql_query("SELECT count(DISTINCT xmin::text) AS n FROM dispatch.patient_access_log")
        .get_result::<Count>(&mut api.conn().await)
        .await
        .unwrap()
        .n
}

/// A writer that lingers ten seconds over a batch of `batch` entries.
fn lingering(api: &Api, batch: usize) -> AccessLog {
    AccessLog::start(
        api.db.pool(),
        AccessLogSettings {
            batch,
            linger: std::time::Duration::from_secs(10),
            ..AccessLogSettings::default()
        },
    )
}

/// docs/dispatch-access-log.md, "Batches": a batch that is not full lingers, and the reads
/// recorded meanwhile join it; a listing's flush ends the linger at once and one INSERT
/// writes them all.
#[actix_web::test]
async fn reads_recorded_while_a_batch_lingers_are_written_by_one_insert_when_flushed() {
    let api = Api::new().await;
    let ids = first_incidents(&api, 3).await;
    let user = api.id("regulador");
    let log = lingering(&api, 1000);
    let t0 = Utc::now();
    let ms = (t0, Duration::milliseconds(1));
    record_reads(&log, user, &ids, 0..5, "GET /incident/{id}", ms).await;
    // The writer has taken the first entry and lingers (for ten seconds): nothing is written.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(entries(&api).await, vec![]);
    record_reads(&log, user, &ids, 5..8, "GET /incident/{id}", ms).await;
    // The flush does not wait out the linger.
    tokio::time::timeout(std::time::Duration::from_secs(5), log.flush())
        .await
        .expect("the flush ended the linger");
    let expected: Vec<_> = (0..8)
        .map(|i| (ids[i % 3], user, "GET /incident/{id}".to_owned()))
        .collect();
    assert_eq!(entries(&api).await, expected);
    assert_eq!(transactions(&api).await, 1);
}

/// A batch that fills does not linger: a busy centre's reads are written as soon as a batch
/// is full, without a flush; what is left over lingers until the next flush.
#[actix_web::test]
async fn a_full_batch_is_written_without_waiting_for_the_linger() {
    let api = Api::new().await;
    let ids = first_incidents(&api, 2).await;
    let user = api.id("tarm");
    let log = lingering(&api, 4);
    let t0 = Utc::now();
    let ms = (t0, Duration::milliseconds(1));
    record_reads(&log, user, &ids, 0..6, "GET /incident/{id}/timeline", ms).await;
    // Four of the six fill a batch, written long before the ten seconds' linger ends.
    let full = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        loop {
            let written = entries(&api).await;
            if !written.is_empty() {
                return written;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("a full batch is written before its linger ends");
    let expected: Vec<_> = (0..6)
        .map(|i| (ids[i % 2], user, "GET /incident/{id}/timeline".to_owned()))
        .collect();
    assert_eq!(full, expected[..4]);
    // The two left over linger with the next batch.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(entries(&api).await, expected[..4]);
    tokio::time::timeout(std::time::Duration::from_secs(5), log.flush())
        .await
        .expect("the flush ended the linger");
    assert_eq!(entries(&api).await, expected);
    assert_eq!(transactions(&api).await, 2);
}

/// Through the API, as an administrator answering an inquiry would: with a ten-second linger
/// the reads just made are not in the table yet, and the incident's listing shows them at
/// once, by whom and through which route.
#[actix_web::test]
async fn a_listing_shows_the_reads_just_made_without_waiting_for_the_linger() {
    let api = Api::lingering(std::time::Duration::from_secs(10)).await;
    let id = first_incidents(&api, 1).await[0];
    api.get("regulador", &format!("/incident/{id}")).await.ok();
    api.get("frota", &format!("/incident/{id}/timeline"))
        .await
        .ok();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(entries(&api).await, vec![]);
    let listing = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        api.get("admin", &format!("/incident/{id}/access-log")),
    )
    .await
    .expect("the listing does not wait out the linger");
    let read: Vec<(&str, &str)> = listing.ok()["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["user"]["descriptive_name"].as_str().unwrap(),
                e["route"].as_str().unwrap(),
            )
        })
        .collect();
    let mut names = Vec::new();
    for login in ["regulador", "frota"] {
        let name: String = users::table
            .filter(users::id.eq(api.id(login)))
            .select(users::descriptive_name)
            .first(&mut api.conn().await)
            .await
            .unwrap();
        names.push(name);
    }
    let (regulator, fleet) = (&names[0], &names[1]);
    assert_eq!(
        read,
        vec![
            (regulator.as_str(), "GET /incident/{id}"),
            (fleet.as_str(), "GET /incident/{id}/timeline"),
        ]
    );
}
