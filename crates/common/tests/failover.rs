//! A server that turns read-only (here `default_transaction_read_only`, as a demoted primary
//! or a standby behind a moved address would be) and then takes writes again: the pool is
//! not ready and its writes are 503 `unavailable` meanwhile, the listener leaves it, and
//! both come back without being rebuilt. (Standbys and promotion: tests/tests/failover.rs.)

use std::time::{Duration, Instant};

use common::db::{self, PoolSettings};
use common::listen::{self, ListenEvent, ListenSettings};
use common::test_support::PrivatePg;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use tokio::sync::broadcast;

const DEADLINE: Duration = Duration::from_secs(30);

async fn event(rx: &mut broadcast::Receiver<ListenEvent>, want: &ListenEvent) {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, rx.recv()).await {
            Ok(Ok(e)) if &e == want => return,
            Ok(Ok(_)) => continue,
            other => panic!("no {want:?}: {other:?}"),
        }
    }
}

async fn set_read_only(admin: &mut AsyncPgConnection, on: bool) {
    let sql = if on {
        "ALTER SYSTEM SET default_transaction_read_only = on"
    } else {
        "ALTER SYSTEM RESET default_transaction_read_only"
    };
    admin.batch_execute(sql).await.unwrap();
    admin
        .batch_execute("SELECT pg_reload_conf()")
        .await
        .unwrap();
}

async fn until_ready(pool: &db::Pool, want: bool) {
    let deadline = Instant::now() + DEADLINE;
    while db::ping(pool).await != want {
        assert!(Instant::now() < deadline, "ping never answered {want}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn insert(pool: &db::Pool) -> diesel::QueryResult<usize> {
    let mut conn = pool.get().await.expect("a connection");
    diesel::sql_query("INSERT INTO failover_t DEFAULT VALUES")
        .execute(&mut conn)
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_server_is_not_ready_refuses_with_503_and_both_pool_and_listener_come_back() {
    let pg = tokio::task::spawn_blocking(PrivatePg::start).await.unwrap();
    let url = pg.url();
    let mut admin = AsyncPgConnection::establish(&url).await.unwrap();
    // The admin session stays writable whatever the server's default.
    admin
        .batch_execute(
            "SET default_transaction_read_only = off; CREATE TABLE failover_t (id serial)",
        )
        .await
        .unwrap();
    let pool = db::pool(&url, &PoolSettings::new("failover_test")).unwrap();
    let (tx, mut rx) = broadcast::channel(64);
    let settings = ListenSettings {
        heartbeat: Duration::from_millis(200),
        application_name: "failover_listen".into(),
        ..ListenSettings::default()
    };
    let listener = listen::spawn(url.clone(), vec!["failover".into()], settings, tx);
    event(&mut rx, &ListenEvent::Reconnected).await;
    assert!(db::ping(&pool).await);
    insert(&pool).await.unwrap();

    set_read_only(&mut admin, true).await;
    until_ready(&pool, false).await;
    let e = insert(&pool)
        .await
        .expect_err("a write on a read-only server");
    assert!(db::failover::is_read_only(&e), "{e}");
    let problem = db::db_error(e);
    assert_eq!((problem.status, &*problem.code), (503, "unavailable"));
    // The listener leaves the read-only server.
    event(&mut rx, &ListenEvent::Disconnected).await;

    set_read_only(&mut admin, false).await;
    until_ready(&pool, true).await;
    insert(&pool).await.unwrap();
    // The listener is back (its subscribers resync on `Reconnected`) and hears what is sent.
    event(&mut rx, &ListenEvent::Reconnected).await;
    let mut conn = pool.get().await.unwrap();
    listen::notify(&mut conn, "failover", "back").await.unwrap();
    event(
        &mut rx,
        &ListenEvent::Notification {
            channel: "failover".into(),
            payload: "back".into(),
        },
    )
    .await;
    listener.abort();
    let rows: i64 = diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
        "(SELECT count(*) FROM failover_t)",
    ))
    .get_result(&mut admin)
    .await
    .unwrap();
    assert_eq!(rows, 2, "the two writes acknowledged, not the refused one");
}
