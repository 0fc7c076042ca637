//! The pool behind Debian's PgBouncer in `pool_mode = transaction`, with fewer server
//! connections than clients (docs/operations.md, "Transaction poolers"):
//! - in [`PoolMode::Transaction`], concurrent statements with parameters, row counts,
//!   `RETURNING` and transactions (committed and rolled back) all work, and the
//!   `application_name` each connection set is carried to the server;
//! - in the default [`PoolMode::Session`] the same pooler makes prepared statements collide,
//!   which is a 503 (never a 500) naming `DATABASE_POOL_MODE`.

use common::db::{self, PoolMode, PoolSettings};
use common::test_support::{PgBouncer, PrivatePg};
use diesel::IntoSql;
use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};

#[derive(diesel::QueryableByName, Debug, PartialEq)]
struct Row {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Text)]
    label: String,
}

fn settings(mode: PoolMode) -> PoolSettings {
    let mut settings = PoolSettings::new("pgbouncer_test");
    settings.max_size = 8;
    settings.mode = mode;
    settings
}

async fn setup() -> (PrivatePg, PgBouncer) {
    let (pg, bouncer) = tokio::task::spawn_blocking(|| {
        let pg = PrivatePg::start();
        let bouncer = PgBouncer::transaction_mode(&pg, 2);
        (pg, bouncer)
    })
    .await
    .unwrap();
    let mut admin = AsyncPgConnection::establish(&pg.url()).await.unwrap();
    admin
        .batch_execute(
            "CREATE SCHEMA app; \
             CREATE TABLE app.items (id bigserial PRIMARY KEY, label text NOT NULL)",
        )
        .await
        .unwrap();
    (pg, bouncer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn transaction_mode_runs_concurrent_statements_through_the_pooler() {
    let (pg, bouncer) = setup().await;
    let pool = db::pool(&bouncer.url("postgres"), &settings(PoolMode::Transaction)).unwrap();

    // 8 clients on 2 server connections, 25 inserts each with parameters and `RETURNING`.
    let writers = (0..8).map(|w| {
        let pool = pool.clone();
        tokio::spawn(async move {
            let mut conn = pool.get().await.unwrap();
            let mut ids = Vec::new();
            for i in 0..25 {
                let label = format!("w{w}-{i}");
                let row: Row = diesel::sql_query(
                    "INSERT INTO app.items (label) VALUES ($1) RETURNING id, label",
                )
                .bind::<Text, _>(&label)
                .get_result(&mut conn)
                .await
                .unwrap_or_else(|e| panic!("insert {label}: {e}"));
                assert_eq!(row.label, label);
                ids.push(row.id);
            }
            ids
        })
    });
    let mut ids = Vec::new();
    for w in writers {
        ids.extend(w.await.unwrap());
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 200, "200 rows, each id once");

    let mut conn = pool.get().await.unwrap();
    // A row count comes back through the unnamed statement.
    let updated =
        diesel::sql_query("UPDATE app.items SET label = label || '!' WHERE label LIKE $1")
            .bind::<Text, _>("w3-%")
            .execute(&mut conn)
            .await
            .unwrap();
    assert_eq!(updated, 25);

    // A transaction keeps its server connection: its rows are seen inside, and gone after a
    // rollback.
    let rolled_back = conn
        .transaction::<(), diesel::result::Error, _>(async |c| {
            diesel::sql_query("DELETE FROM app.items WHERE label LIKE 'w1-%'")
                .execute(c)
                .await?;
            let left: Vec<Row> =
                diesel::sql_query("SELECT id, label FROM app.items WHERE label LIKE 'w1-%'")
                    .load(c)
                    .await?;
            assert!(left.is_empty());
            Err(diesel::result::Error::RollbackTransaction)
        })
        .await;
    assert!(matches!(
        rolled_back,
        Err(diesel::result::Error::RollbackTransaction)
    ));
    let mut direct = AsyncPgConnection::establish(&pg.url()).await.unwrap();
    let rows: Vec<Row> = diesel::sql_query(
        "SELECT id, label FROM app.items WHERE label LIKE 'w1-%' OR label LIKE 'w3-%!' ORDER BY id",
    )
    .load(&mut direct)
    .await
    .unwrap();
    assert_eq!(
        rows.len(),
        50,
        "w1's rows survived the rollback, w3's were updated"
    );

    // The pattern that breaks a session-mode pool (the next test) works: a typed statement,
    // which a session pool would cache, run again while its server connection is held by
    // another client.
    for round in 0..20_i64 {
        let mut other = pool.get().await.unwrap();
        let query = || diesel::select(round.into_sql::<BigInt>());
        assert_eq!(query().get_result::<i64>(&mut conn).await.unwrap(), round);
        other.batch_execute("BEGIN; SELECT 1").await.unwrap();
        assert_eq!(query().get_result::<i64>(&mut conn).await.unwrap(), round);
        other.batch_execute("ROLLBACK").await.unwrap();
    }

    // The pooler carries each client's `application_name` to the server connection it lends.
    let name: Vec<Row> =
        diesel::sql_query("SELECT 0::int8 AS id, current_setting('application_name') AS label")
            .load(&mut conn)
            .await
            .unwrap();
    assert_eq!(name[0].label, "pgbouncer_test");
    assert!(db::ping(&pool).await, "ready through the pooler");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn session_mode_through_a_transaction_pooler_is_503_naming_the_setting() {
    let (_pg, bouncer) = setup().await;
    let pool = db::pool(&bouncer.url("postgres"), &settings(PoolMode::Session)).unwrap();
    // A client prepares its statement (cached, named) on the server connection it was lent.
    // Another client then holds that server connection in a transaction (PgBouncer lends the
    // connection released last), so the first client's next use of its statement reaches the
    // other server connection, which never saw it.
    let mut failures = Vec::new();
    for round in 0..20 {
        let mut a = pool.get().await.unwrap();
        let mut b = pool.get().await.unwrap();
        // A statement diesel caches (a typed query; `sql_query` text is never cached).
        let query = || diesel::select(round.into_sql::<BigInt>());
        if let Err(e) = query().get_result::<i64>(&mut a).await {
            failures.push(e);
            break;
        }
        b.batch_execute("BEGIN; SELECT 1").await.unwrap();
        let second = query().get_result::<i64>(&mut a).await;
        b.batch_execute("ROLLBACK").await.unwrap();
        if let Err(e) = second {
            failures.push(e);
            break;
        }
    }
    let e = failures
        .pop()
        .expect("named prepared statements collide through a transaction pooler");
    assert!(
        db::pool_mode::is_pooler_symptom(&e.to_string()),
        "the prepared-statement symptom: {e}"
    );
    let problem = db::db_error(e);
    assert_eq!((problem.status, &*problem.code), (503, "unavailable"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_start_probe_tells_a_transaction_pooler_from_a_server() {
    let (pg, bouncer) = setup().await;
    for round in 0..5 {
        assert_eq!(
            db::pool_mode::is_transaction_pooler(&bouncer.url("postgres")).await,
            Some(true),
            "round {round}: PgBouncer in transaction mode"
        );
        assert_eq!(
            db::pool_mode::is_transaction_pooler(&pg.url()).await,
            Some(false),
            "round {round}: PostgreSQL itself"
        );
    }
    assert_eq!(
        db::pool_mode::is_transaction_pooler("postgres://postgres@127.0.0.1:1/postgres").await,
        None,
        "nothing to ask"
    );
}
