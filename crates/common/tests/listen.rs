//! The listener receives committed notifications only, and survives its connection being
//! killed by the server.

use std::time::Duration;

use common::listen::{self, ListenEvent, ListenSettings};
use common::test_support::TestDb;
use diesel_async::{AsyncConnection, RunQueryDsl};
use tokio::sync::broadcast;

async fn next_notification(rx: &mut broadcast::Receiver<ListenEvent>) -> (String, String) {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Ok(ListenEvent::Notification { channel, payload })) => return (channel, payload),
            Ok(Ok(ListenEvent::Reconnected | ListenEvent::Disconnected)) => continue,
            other => panic!("no notification: {other:?}"),
        }
    }
}

async fn reconnected(rx: &mut broadcast::Receiver<ListenEvent>) {
    loop {
        match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
            Ok(Ok(ListenEvent::Reconnected)) => return,
            Ok(Ok(_)) => continue,
            other => panic!("no reconnection: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn delivers_committed_notifications_and_survives_a_killed_connection() {
    let db = TestDb::blank().await;
    let (tx, mut rx) = broadcast::channel(64);
    let settings = ListenSettings {
        heartbeat: Duration::from_millis(200),
        application_name: "listen_test".into(),
        ..ListenSettings::default()
    };
    let handle = listen::spawn(db.url().to_owned(), vec!["incident".into()], settings, tx);
    reconnected(&mut rx).await;

    let mut conn = db.pool().get().await.unwrap();
    // A rolled-back transaction announces nothing; a committed one does.
    let _ = conn
        .transaction::<(), diesel::result::Error, _>(async |c| {
            listen::notify(c, "incident", "rolled back").await?;
            Err(diesel::result::Error::RollbackTransaction)
        })
        .await;
    conn.transaction::<(), diesel::result::Error, _>(async |c| {
        listen::notify(c, "incident", "42:7").await
    })
    .await
    .unwrap();
    assert_eq!(
        next_notification(&mut rx).await,
        ("incident".into(), "42:7".into())
    );

    diesel::sql_query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'listen_test'",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    reconnected(&mut rx).await;
    listen::notify(&mut conn, "incident", "42:8").await.unwrap();
    assert_eq!(
        next_notification(&mut rx).await,
        ("incident".into(), "42:8".into())
    );
    handle.abort();
}
