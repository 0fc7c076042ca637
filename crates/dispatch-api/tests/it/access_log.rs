//! The access log's writer and table (docs/dispatch-access-log.md): batches written off the
//! request path, the retention, and the table refusing to be rewritten.

use chrono::{Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use dispatch_api::access_log::{AccessLog, AccessLogSettings};
use dispatch_api::schema::dispatch::{incidents, patient_access_log};

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

#[actix_web::test]
async fn a_burst_is_written_whole_and_the_retention_removes_only_what_is_past_it() {
    let api = Api::new().await;
    let ids: Vec<i64> = incidents::table
        .select(incidents::id)
        .order_by(incidents::id)
        .limit(3)
        .load(&mut api.conn().await)
        .await
        .unwrap();
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
    for i in 0..20 {
        log.record(
            user,
            ids[i % 3],
            "GET /incident/{id}",
            t0 + Duration::seconds(i as i64),
        )
        .await;
    }
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
