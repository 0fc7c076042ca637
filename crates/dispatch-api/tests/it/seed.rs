//! The demo seed: idempotent, every incident with its history, and quick at test scale.

use std::time::Instant;

use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use dispatch_api::seed;

use crate::support::Api;

#[derive(QueryableByName, Debug, PartialEq)]
struct Counts {
    #[diesel(sql_type = diesel::sql_types::Text)]
    counts: String,
}

/// Row counts of every table of the schema, as one text.
async fn counts(api: &Api) -> Counts {
    diesel::sql_query(
        "SELECT string_agg(format('%s=%s', table_name,
                 (xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM dispatch.%I', table_name), false, true, '')))[1]::text),
                 ' ' ORDER BY table_name) AS counts
           FROM information_schema.tables
          WHERE table_schema = 'dispatch' AND table_type = 'BASE TABLE'",
    )
    .get_result(&mut api.conn().await)
    .await
    .unwrap()
}

#[actix_web::test]
async fn seeding_again_duplicates_nothing() {
    let api = Api::new().await;
    let before = counts(&api).await;
    let started = Instant::now();
    let report = seed::run_with(&mut api.conn().await, seed::Scale::Test)
        .await
        .unwrap();
    eprintln!("second seed (test scale) took {:?}", started.elapsed());
    assert_eq!(counts(&api).await, before, "{before:?}");
    assert!(
        report.inserted.values().all(|n| *n == 0),
        "{:?}",
        report.inserted
    );
}

#[derive(QueryableByName)]
struct Mismatch {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

#[actix_web::test]
async fn every_incident_has_one_history_row_per_version() {
    let api = Api::new().await;
    let m: Mismatch = diesel::sql_query(
        "SELECT count(*) AS n FROM dispatch.incidents i
          WHERE i.version <> (SELECT count(*) FROM dispatch.incident_history h WHERE h.incident_id = i.id)
             OR i.version <> (SELECT max(h.version) FROM dispatch.incident_history h WHERE h.incident_id = i.id)",
    )
    .get_result(&mut api.conn().await)
    .await
    .unwrap();
    assert_eq!(m.n, 0);
    // History is append-only: the database refuses to rewrite it.
    let err = diesel::sql_query("UPDATE dispatch.incident_history SET action = 'x'")
        .execute(&mut api.conn().await)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("append-only"), "{err}");
}
