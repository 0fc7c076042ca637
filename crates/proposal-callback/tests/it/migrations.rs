//! Every migration goes down and up again cleanly.

use common::test_support::TestDb;
use diesel::Connection;
use diesel::connection::SimpleConnection;
use diesel_async::AsyncPgConnection;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_migrations::MigrationHarness;
use proposal_callback::{MIGRATIONS, MIGRATIONS_DIR, SCHEMA};

#[actix_web::test]
async fn migrations_revert_and_reapply() {
    let db = TestDb::new(SCHEMA, MIGRATIONS, MIGRATIONS_DIR).await;
    let url = db.url().to_owned();
    tokio::task::spawn_blocking(move || {
        let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::establish(&url).unwrap();
        conn.batch_execute("SET search_path TO proposal, public")
            .unwrap();
        let reverted = conn.revert_all_migrations(MIGRATIONS).unwrap();
        assert_eq!(reverted.len(), 5);
        let applied = conn.run_pending_migrations(MIGRATIONS).unwrap();
        assert_eq!(applied.len(), 5);
    })
    .await
    .unwrap();
    // The re-applied schema works: seed it.
    crate::support::seeded(&db.pool()).await;
}
