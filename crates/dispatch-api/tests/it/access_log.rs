//! The access log's writer and table (docs/dispatch-access-log.md): batches written off the
//! request path, the retention, and the table refusing to be rewritten. The writer is
//! driven directly here, as the routes' one recording path (`routes::recorded`) drives it.
#![allow(clippy::disallowed_methods)]

use chrono::{Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::access_log::{AccessLog, AccessLogSettings};
use dispatch_api::error::Error;
use dispatch_api::schema::dispatch::{incidents, users};
use tokio::task::JoinHandle;

use crate::support::Api;
use crate::support::access_log_view::patient_access_log;

/// (incident, user, route) of every entry, oldest first.
async fn entries(api: &Api) -> Vec<(i64, i64, String)> {
    patient_access_log::table
        .select((
            patient_access_log::incident_id,
            patient_access_log::user_id,
            patient_access_log::route,
        ))
        .order_by((
            patient_access_log::at,
            patient_access_log::batch_id,
            patient_access_log::position,
        ))
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
/// from `t0`, all at once (as concurrent requests do); returns once every entry is committed.
async fn record_reads(
    log: &AccessLog,
    user: i64,
    ids: &[i64],
    range: std::ops::Range<usize>,
    route: &'static str,
    (t0, step): (chrono::DateTime<Utc>, Duration),
) {
    let reads = range.map(|i| log.record(user, ids[i % ids.len()], route, t0 + step * i as i32));
    for recorded in futures_util::future::join_all(reads).await {
        recorded.unwrap();
    }
}

/// [`record_reads`] in the background: each read waits for its entry's commit.
fn reads_waiting(
    log: &AccessLog,
    user: i64,
    ids: &[i64],
    range: std::ops::Range<usize>,
    route: &'static str,
    (t0, step): (chrono::DateTime<Utc>, Duration),
) -> Vec<JoinHandle<Result<(), Error>>> {
    range
        .map(|i| {
            let (log, id) = (log.clone(), ids[i % ids.len()]);
            // Each read is a request in flight until it is answered, as the `App` counts it.
            let request = log.in_flight().map(|f| f.enter());
            tokio::spawn(async move {
                let recorded = log.record(user, id, route, t0 + step * i as i32).await;
                drop(request);
                recorded
            })
        })
        .collect()
}

/// Waits (at most five seconds) until `n` entries are in the writer's hands, their reads
/// waiting for the commit.
async fn until_waiting(log: &AccessLog, n: usize) {
    tokio::time::timeout(std::time::Duration::from_secs(5), async {
        while log.waiting() != n {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{} entries waiting, not {n}", log.waiting()));
}

/// Waits (at most five seconds) for reads to be answered; each recorded its entry.
async fn answered(reads: Vec<JoinHandle<Result<(), Error>>>) {
    for read in reads {
        tokio::time::timeout(std::time::Duration::from_secs(5), read)
            .await
            .expect("the read is answered")
            .unwrap()
            .unwrap();
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
    // Every read has its entry when `record` returns: nothing is held in memory.
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
    .await
    .unwrap();
    // The retention runs after the batch is written and its reads told: a flush waits for it.
    log.flush().await;
    assert_eq!(
        entries(&api).await,
        vec![(ids[0], user, "GET /incident/{id}/regulation".to_owned())]
    );
}

/// How many sessions run a statement beginning with `start` and wait on a lock of the kind
/// `event` (`pg_stat_activity.wait_event`: `relation`, `advisory`, ...; `None`: any).
async fn waiting_on_a_lock(api: &Api, start: &str, event: Option<&str>) -> i64 {
    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    diesel::sql_query(
        "SELECT count(*) AS n FROM pg_stat_activity \
         WHERE starts_with(query, $1) AND wait_event_type = 'Lock' \
         AND wait_event = coalesce($2, wait_event)",
    )
    .bind::<diesel::sql_types::Text, _>(start)
    .bind::<diesel::sql_types::Nullable<diesel::sql_types::Text>, _>(event)
    .get_result::<Count>(&mut api.conn().await)
    .await
    .unwrap()
    .n
}

/// The retention runs beside the writer (docs/dispatch-access-log.md, "Retention"): while its
/// DELETE waits (here on a lock another session holds on the old entries), reads are still
/// recorded and answered; once it ends, a flush finds the old entries gone.
#[actix_web::test]
async fn reads_are_answered_while_the_retention_waits() {
    use diesel_async::AsyncConnection;
    let api = Api::new().await;
    let ids = first_incidents(&api, 2).await;
    let user = api.id("regulador");
    let log = AccessLog::start(
        api.db.pool(),
        AccessLogSettings {
            retention: std::time::Duration::from_secs(3600),
            ..AccessLogSettings::default()
        },
    );
    let t0 = Utc::now() - Duration::days(1);
    let route = "GET /incident/{id}";
    record_reads(&log, user, &ids, 0..3, route, (t0, Duration::seconds(1))).await;
    // Another session holds the old entries: a DELETE of them waits until it ends.
    let mut holder = diesel_async::AsyncPgConnection::establish(api.db.url())
        .await
        .unwrap();
    diesel::sql_query("BEGIN")
        .execute(&mut holder)
        .await
        .unwrap();
    diesel::sql_query("SELECT id FROM dispatch.patient_access_batches FOR UPDATE")
        .execute(&mut holder)
        .await
        .unwrap();
    // Two hours later: the retention is due, and its DELETE waits on the lock.
    let later = (t0 + Duration::hours(2), Duration::seconds(1));
    record_reads(
        &log,
        user,
        &ids,
        0..1,
        "GET /incident/{id}/regulation",
        later,
    )
    .await;
    let waiting_delete = async |api: &Api| -> i64 {
        waiting_on_a_lock(
            api,
            "DELETE FROM \"dispatch\".\"patient_access_batches\"",
            None,
        )
        .await
    };
    tokio::time::timeout(std::time::Duration::from_secs(5), async {
        while waiting_delete(&api).await == 0 {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the retention's DELETE waits on the lock");
    // Reads made meanwhile are recorded and answered: they do not wait behind the DELETE.
    let reads = reads_waiting(&log, user, &ids, 1..5, "GET /incident/{id}/timeline", later);
    answered(reads).await;
    assert_eq!(waiting_delete(&api).await, 1, "the DELETE still waits");
    assert_eq!(entries(&api).await.len(), 3 + 1 + 4);
    // The lock released, the retention ends; a flush waits for it.
    diesel::sql_query("ROLLBACK")
        .execute(&mut holder)
        .await
        .unwrap();
    log.flush().await;
    let left = entries(&api).await;
    assert_eq!(
        left.len(),
        5,
        "only the entries past the retention are removed: {left:?}"
    );
    assert!(left.iter().all(|(_, _, r)| r != route), "{left:?}");
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
        .await
        .unwrap();
    let mut conn = api.conn().await;
    for statement in [
        "UPDATE dispatch.patient_access_log SET route = 'nothing'",
        "DELETE FROM dispatch.patient_access_log",
        "INSERT INTO dispatch.patient_access_log (incident_id, user_id, route, at) \
         VALUES (1, 1, 'GET /incident/{id}', now())",
        "UPDATE dispatch.patient_access_batches SET routes = ARRAY['nothing']",
        "TRUNCATE dispatch.patient_access_batches",
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
        .await
        .unwrap();

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
         WHERE statement LIKE 'INSERT INTO dispatch.patient_access_batches%'",
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
        appends[0].statement.contains("$1::int8[]"),
        "{}",
        appends[0].statement
    );
}

/// How many transactions wrote the log's entries (each INSERT is one row, one batch).
async fn transactions(api: &Api) -> i64 {
    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    diesel::sql_query("SELECT count(DISTINCT xmin::text) AS n FROM dispatch.patient_access_batches")
        .get_result::<Count>(&mut api.conn().await)
        .await
        .unwrap()
        .n
}

/// A writer that lingers ten seconds over a batch of `batch` entries (while a request in
/// flight has not joined it).
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
/// recorded meanwhile join it, each waiting for the commit; a listing's flush ends the linger
/// at once, one INSERT writes them all, and then the reads are answered.
#[actix_web::test]
async fn reads_recorded_while_a_batch_lingers_are_written_by_one_insert_when_flushed() {
    let api = Api::new().await;
    let ids = first_incidents(&api, 3).await;
    let user = api.id("regulador");
    let log = lingering(&api, 1000);
    // A request being served that has not recorded its read: it may join, so the batch
    // lingers.
    let _serving = log.in_flight().unwrap().enter();
    let t0 = Utc::now();
    let ms = (t0, Duration::milliseconds(1));
    let first = reads_waiting(&log, user, &ids, 0..5, "GET /incident/{id}", ms);
    // The writer holds the five and lingers (for ten seconds): nothing is written, and no
    // read is answered.
    until_waiting(&log, 5).await;
    assert_eq!(entries(&api).await, vec![]);
    assert!(first.iter().all(|read| !read.is_finished()));
    let more = reads_waiting(&log, user, &ids, 5..8, "GET /incident/{id}", ms);
    until_waiting(&log, 8).await;
    // The flush does not wait out the linger.
    tokio::time::timeout(std::time::Duration::from_secs(5), log.flush())
        .await
        .expect("the flush ended the linger");
    let expected: Vec<_> = (0..8)
        .map(|i| (ids[i % 3], user, "GET /incident/{id}".to_owned()))
        .collect();
    assert_eq!(entries(&api).await, expected);
    assert_eq!(transactions(&api).await, 1);
    answered(first.into_iter().chain(more).collect()).await;
    assert_eq!(log.waiting(), 0);
}

/// A batch that fills does not linger: a busy centre's reads are written, and answered, as
/// soon as a batch is full, without a flush; what is left over lingers until the next flush.
#[actix_web::test]
async fn a_full_batch_is_written_without_waiting_for_the_linger() {
    let api = Api::new().await;
    let ids = first_incidents(&api, 2).await;
    let user = api.id("tarm");
    let log = lingering(&api, 4);
    let _serving = log.in_flight().unwrap().enter();
    let t0 = Utc::now();
    let ms = (t0, Duration::milliseconds(1));
    let route = "GET /incident/{id}/timeline";
    let expected: Vec<_> = (0..6)
        .map(|i| (ids[i % 2], user, route.to_owned()))
        .collect();
    // Four fill a batch: written and answered long before the ten seconds' linger ends.
    answered(reads_waiting(&log, user, &ids, 0..4, route, ms)).await;
    assert_eq!(entries(&api).await, expected[..4]);
    // The two after them linger with the next batch, unanswered.
    let left = reads_waiting(&log, user, &ids, 4..6, route, ms);
    until_waiting(&log, 2).await;
    assert_eq!(entries(&api).await, expected[..4]);
    assert!(left.iter().all(|read| !read.is_finished()));
    tokio::time::timeout(std::time::Duration::from_secs(5), log.flush())
        .await
        .expect("the flush ended the linger");
    answered(left).await;
    assert_eq!(entries(&api).await, expected);
    assert_eq!(transactions(&api).await, 2);
}

/// Through the API, as an administrator answering an inquiry would: with a ten-second linger
/// (and another request being served, which may still join the batch) two people's reads
/// wait for their entries, unanswered and not in the table yet; the incident's listing ends
/// the linger, shows both by whom and through which route, and the two reads are answered.
#[actix_web::test]
async fn a_listing_shows_the_reads_waiting_without_waiting_for_the_linger() {
    let api = Api::lingering(std::time::Duration::from_secs(10)).await;
    let id = first_incidents(&api, 1).await[0];
    let log = &api.state().access_log;
    let _serving = log.in_flight().unwrap().enter();
    let detail = format!("/incident/{id}");
    let timeline = format!("/incident/{id}/timeline");
    let reads = async { tokio::join!(api.get("regulador", &detail), api.get("frota", &timeline)) };
    let listing = async {
        until_waiting(log, 2).await;
        assert_eq!(entries(&api).await, vec![]);
        tokio::time::timeout(
            std::time::Duration::from_secs(5),
            api.get("admin", &format!("/incident/{id}/access-log")),
        )
        .await
        .expect("the listing does not wait out the linger")
    };
    let ((regulator_read, fleet_read), listing) = tokio::join!(reads, listing);
    assert_eq!(regulator_read.ok()["id"], id);
    assert_eq!(fleet_read.ok()["id"], id);
    let mut read: Vec<(&str, &str)> = listing.ok()["entries"]
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
    // Both read in the same instant of the clock: the order between them is the writer's.
    read.sort();
    let name = async |login: &str| -> String {
        users::table
            .filter(users::id.eq(api.id(login)))
            .select(users::descriptive_name)
            .first(&mut api.conn().await)
            .await
            .unwrap()
    };
    let mut expected = [
        (name("regulador").await, "GET /incident/{id}"),
        (name("frota").await, "GET /incident/{id}/timeline"),
    ];
    expected.sort();
    let expected: Vec<(&str, &str)> = expected.iter().map(|(n, r)| (n.as_str(), *r)).collect();
    assert_eq!(read, expected);
}

/// docs/dispatch-access-log.md, "The linger": a batch lingers only while a request in flight
/// may still join it. Three reads, the only requests in flight, are written together and
/// answered long before a ten-second linger; two more linger while a third request is served,
/// and are written and answered, without a flush, once that request ends without recording.
#[actix_web::test]
async fn a_batch_is_written_once_no_request_in_flight_can_join_it() {
    let api = Api::new().await;
    let ids = first_incidents(&api, 3).await;
    let user = api.id("regulador");
    let log = lingering(&api, 1000);
    let t0 = Utc::now();
    let ms = (t0, Duration::milliseconds(1));
    let route = "GET /incident/{id}";
    let expected: Vec<_> = (0..5)
        .map(|i| (ids[i % 3], user, route.to_owned()))
        .collect();
    tokio::time::timeout(
        std::time::Duration::from_secs(5),
        answered(reads_waiting(&log, user, &ids, 0..3, route, ms)),
    )
    .await
    .expect("answered without waiting out the linger");
    assert_eq!(entries(&api).await, expected[..3]);
    assert!(transactions(&api).await <= 3);
    let before = transactions(&api).await;
    // A list of units, say: a request in flight that reads no patient data (yet).
    let serving = log.in_flight().unwrap().enter();
    let left = reads_waiting(&log, user, &ids, 3..5, route, ms);
    until_waiting(&log, 2).await;
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(left.iter().all(|read| !read.is_finished()));
    assert_eq!(entries(&api).await, expected[..3]);
    drop(serving);
    tokio::time::timeout(std::time::Duration::from_secs(5), answered(left))
        .await
        .expect("answered once the other request ended");
    assert_eq!(entries(&api).await, expected);
    assert_eq!(transactions(&api).await, before + 1);
    assert_eq!(log.waiting(), 0);
}

/// Through the API: with a ten-second linger, two reads that are the only requests being
/// served are answered at once, each with its entry (nobody else can join their batch).
#[actix_web::test]
async fn reads_through_the_api_do_not_wait_out_the_linger_when_nobody_else_is_served() {
    let api = Api::lingering(std::time::Duration::from_secs(10)).await;
    let id = first_incidents(&api, 1).await[0];
    let detail = format!("/incident/{id}");
    let timeline = format!("/incident/{id}/timeline");
    let (regulator_read, fleet_read) =
        tokio::time::timeout(std::time::Duration::from_secs(5), async {
            tokio::join!(api.get("regulador", &detail), api.get("frota", &timeline))
        })
        .await
        .expect("answered without waiting out the linger");
    assert_eq!(regulator_read.ok()["id"], id);
    fleet_read.ok();
    let mut read: Vec<(i64, i64, String)> = entries(&api).await;
    read.sort();
    let mut expected = vec![
        (id, api.id("regulador"), "GET /incident/{id}".to_owned()),
        (
            id,
            api.id("frota"),
            "GET /incident/{id}/timeline".to_owned(),
        ),
    ];
    expected.sort();
    assert_eq!(read, expected);
}

/// A batch the database refuses is not written and its read is not answered (503, no
/// patient data); it is never tried again, so the entry does not appear later: the next read
/// is the only one listed.
#[actix_web::test]
async fn a_read_whose_entry_is_refused_is_answered_503_and_never_written_later() {
    let api = Api::new().await;
    let id = first_incidents(&api, 1).await[0];
    let mut conn = api.conn().await;
    diesel::sql_query(
        "CREATE FUNCTION dispatch.refuse_for_the_test() RETURNS trigger LANGUAGE plpgsql \
         AS $$ BEGIN RAISE EXCEPTION 'refused for the test'; END $$",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    diesel::sql_query(
        "CREATE TRIGGER refuse_for_the_test BEFORE INSERT ON dispatch.patient_access_batches \
         FOR EACH STATEMENT EXECUTE FUNCTION dispatch.refuse_for_the_test()",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    let refused = api.get("regulador", &format!("/incident/{id}")).await;
    refused.problem(503, "unavailable");
    assert!(refused.body.get("basic_data").is_none(), "{}", refused.body);
    assert_eq!(api.state().access_log.waiting(), 0);

    diesel::sql_query("DROP TRIGGER refuse_for_the_test ON dispatch.patient_access_batches")
        .execute(&mut conn)
        .await
        .unwrap();
    api.get("frota", &format!("/incident/{id}/timeline"))
        .await
        .ok();
    let listing = api
        .get("admin", &format!("/incident/{id}/access-log"))
        .await;
    let routes: Vec<(i64, &str)> = listing.ok()["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["user"]["id"].as_i64().unwrap(),
                e["route"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        routes,
        vec![(api.id("frota"), "GET /incident/{id}/timeline")]
    );
}

/// The database out of reach: the writer tries the batch until `give_up` and then fails it;
/// the read gets the 503 the service answers when its database is down.
#[actix_web::test]
async fn an_entry_the_database_cannot_take_fails_its_read_with_a_503() {
    let nowhere = common::db::pool(
        &format!("postgres://postgres@127.0.0.1:{}/nowhere", closed_port()),
        &common::db::PoolSettings::new("access_log_test"),
    )
    .unwrap();
    let log = AccessLog::start(
        nowhere,
        AccessLogSettings {
            give_up: std::time::Duration::from_secs(1),
            ..AccessLogSettings::default()
        },
    );
    let err = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        log.record_all(1, &[1, 2, 3], "GET /incident/mask", Utc::now()),
    )
    .await
    .expect("the read is not held past the bound")
    .unwrap_err();
    let problem = err.problem();
    assert_eq!(
        (problem.status, problem.code.as_ref()),
        (503, "unavailable")
    );
    assert_eq!(log.waiting(), 0);
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Several incidents read at once (a list) are recorded with one wait, across batches.
#[actix_web::test]
async fn reads_of_several_incidents_at_once_have_an_entry_each_when_recorded() {
    let api = Api::new().await;
    let ids = first_incidents(&api, 5).await;
    let user = api.id("regulador");
    let log = AccessLog::start(
        api.db.pool(),
        AccessLogSettings {
            batch: 2,
            ..AccessLogSettings::default()
        },
    );
    log.record_all(user, &ids, "GET /incident/mask", Utc::now())
        .await
        .unwrap();
    let expected: Vec<_> = ids
        .iter()
        .map(|id| (*id, user, "GET /incident/mask".to_owned()))
        .collect();
    assert_eq!(entries(&api).await, expected);
    assert_eq!(transactions(&api).await, 3);
    log.record_all(user, &[], "GET /incident/mask", Utc::now())
        .await
        .unwrap();
    assert_eq!(entries(&api).await.len(), 5);
}

/// A listing answers at most a page (1,000 entries), oldest first, and says when more matched.
#[actix_web::test]
async fn a_listing_answers_a_page_and_says_it_was_truncated() {
    let api = Api::new().await;
    let id = first_incidents(&api, 1).await[0];
    let log = AccessLog::start(api.db.pool(), AccessLogSettings::default());
    let t0 = Utc::now() - Duration::hours(1);
    let reads: Vec<i64> = vec![id; 1001];
    log.record_all(api.id("tarm"), &reads, "GET /incident/{id}", t0)
        .await
        .unwrap();
    log.record(
        api.id("regulador"),
        id,
        "GET /incident/{id}",
        t0 + Duration::seconds(1),
    )
    .await
    .unwrap();
    let listed = api
        .get("admin", &format!("/incident/{id}/access-log"))
        .await;
    let body = listed.ok();
    assert_eq!(body["truncated"], true);
    let entries = body["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1000);
    assert!(
        entries
            .iter()
            .all(|e| e["user"]["id"] == api.id("tarm") && e["incident_id"] == id),
        "the page holds the oldest entries: {}",
        entries[999]
    );
}

/// docs/dispatch-access-log.md, "Group commit": with two writer connections a batch is written
/// while the one before it is still in the database, and its reads are answered only after
/// the earlier batch's (the outcomes in the batches' order, which a flush relies on). Here the
/// first batch's INSERT waits on an advisory lock the test holds (a trigger takes it for one
/// incident only): the second batch commits meanwhile, its read still waiting; with one
/// writer connection the second batch is not even written.
#[actix_web::test]
async fn a_batch_is_written_while_the_one_before_waits_and_answered_after_it() {
    use diesel_async::AsyncConnection;
    let api = Api::new().await;
    let ids = first_incidents(&api, 2).await;
    let user = api.id("regulador");
    for statement in [
        format!(
            "CREATE FUNCTION dispatch.hold_batch() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN
               IF {} = ANY (NEW.incident_ids) THEN PERFORM pg_advisory_xact_lock(4242); END IF;
               RETURN NEW;
             END $$",
            ids[0]
        ),
        "CREATE TRIGGER hold_batch BEFORE INSERT ON dispatch.patient_access_batches \
         FOR EACH ROW EXECUTE FUNCTION dispatch.hold_batch()"
            .to_owned(),
    ] {
        diesel::sql_query(statement)
            .execute(&mut api.conn().await)
            .await
            .unwrap();
    }
    let mut holder = diesel_async::AsyncPgConnection::establish(api.db.url())
        .await
        .unwrap();
    let held = async |api: &Api| -> i64 {
        // On the test's advisory lock, nothing else.
        waiting_on_a_lock(
            api,
            "INSERT INTO dispatch.patient_access_batches",
            Some("advisory"),
        )
        .await
    };
    let until_held = async |api: &Api| {
        tokio::time::timeout(std::time::Duration::from_secs(5), async {
            while held(api).await == 0 {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        })
        .await
        .expect("the first batch's INSERT waits on the lock");
    };
    let route = "GET /incident/{id}";
    let t0 = Utc::now();
    for (round, writers) in [2, 1].into_iter().enumerate() {
        // Each round's reads after the one before's (the entries are listed by time).
        let ms = (
            t0 + Duration::seconds(round as i64),
            Duration::milliseconds(1),
        );
        diesel::sql_query("SELECT pg_advisory_lock(4242)")
            .execute(&mut holder)
            .await
            .unwrap();
        let log = AccessLog::start(
            api.db.pool(),
            AccessLogSettings {
                linger: std::time::Duration::ZERO,
                writers,
                ..AccessLogSettings::default()
            },
        );
        let before = entries(&api).await.len();
        // The first read's batch (incident ids[0]) waits on the lock.
        let first = reads_waiting(&log, user, &ids, 0..1, route, ms);
        until_held(&api).await;
        // The second read's batch (ids[1]) needs no lock.
        let second = reads_waiting(&log, user, &ids, 1..2, route, ms);
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let written = entries(&api).await[before..].to_vec();
        if writers == 2 {
            assert_eq!(written, vec![(ids[1], user, route.to_owned())]);
        } else {
            assert_eq!(
                written,
                vec![],
                "one connection: the second batch waits its turn"
            );
        }
        // Committed or not, the second read is not answered before the first.
        assert!(!second[0].is_finished() && !first[0].is_finished());
        diesel::sql_query("SELECT pg_advisory_unlock(4242)")
            .execute(&mut holder)
            .await
            .unwrap();
        answered(first.into_iter().chain(second).collect()).await;
        let mut written = entries(&api).await[before..].to_vec();
        written.sort();
        let mut expected = vec![
            (ids[0], user, route.to_owned()),
            (ids[1], user, route.to_owned()),
        ];
        expected.sort();
        assert_eq!(written, expected, "{writers} writer connection(s)");
        assert_eq!(log.waiting(), 0);
    }
}
