//! Every migration goes down and up again, and the schema comes back the same.

use diesel::Connection;
use diesel::RunQueryDsl;
use diesel::connection::SimpleConnection;
use diesel_async::AsyncPgConnection;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_migrations::MigrationHarness;
use dispatch_api::MIGRATIONS;

use crate::support::Api;

#[derive(diesel::QueryableByName, Debug, PartialEq)]
struct Shape {
    #[diesel(sql_type = diesel::sql_types::Text)]
    shape: String,
}

/// Columns, indexes, triggers and functions of the schema, as one text.
const SHAPE: &str = "SELECT concat_ws(E'\\n',
    (SELECT string_agg(format('%s.%s %s %s %s', table_name, column_name, data_type, is_nullable,
                              coalesce(generation_expression, column_default, '')), E'\\n'
                       ORDER BY table_name, column_name)
       FROM information_schema.columns WHERE table_schema = 'dispatch'
        AND table_name <> '__diesel_schema_migrations'),
    (SELECT string_agg(indexdef, E'\\n' ORDER BY indexdef) FROM pg_indexes
      WHERE schemaname = 'dispatch' AND tablename <> '__diesel_schema_migrations'),
    (SELECT string_agg(format('%s %s', event_object_table, trigger_name), E'\\n'
                       ORDER BY event_object_table, trigger_name, event_manipulation)
       FROM information_schema.triggers WHERE trigger_schema = 'dispatch'),
    (SELECT string_agg(routine_name, E'\\n' ORDER BY routine_name)
       FROM information_schema.routines WHERE routine_schema = 'dispatch')) AS shape";

#[actix_web::test]
async fn migrations_revert_and_reapply_to_the_same_schema() {
    let api = Api::new().await;
    let url = api.db.url().to_owned();
    tokio::task::spawn_blocking(move || {
        let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::establish(&url).unwrap();
        conn.batch_execute("SET search_path TO dispatch, public")
            .unwrap();
        let before: Shape = diesel::sql_query(SHAPE).get_result(&mut conn).unwrap();
        let reverted = conn.revert_all_migrations(MIGRATIONS).unwrap().len();
        let applied = conn.run_pending_migrations(MIGRATIONS).unwrap().len();
        let all = diesel::migration::MigrationSource::<diesel::pg::Pg>::migrations(&MIGRATIONS)
            .unwrap()
            .len();
        assert_eq!((reverted, applied), (all, all));
        let after: Shape = diesel::sql_query(SHAPE).get_result(&mut conn).unwrap();
        assert_eq!(before, after);
    })
    .await
    .unwrap();
}
