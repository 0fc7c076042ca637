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
        let all = std::fs::read_dir(MIGRATIONS_DIR).unwrap().count();
        let reverted = conn.revert_all_migrations(MIGRATIONS).unwrap();
        assert_eq!(reverted.len(), all);
        let applied = conn.run_pending_migrations(MIGRATIONS).unwrap();
        assert_eq!(applied.len(), all);
    })
    .await
    .unwrap();
    // The re-applied schema works: seed it.
    crate::support::seeded(&db.pool()).await;
}
