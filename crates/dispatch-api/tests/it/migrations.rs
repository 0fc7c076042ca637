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

/// A connection the migrations run on, as `migrate` runs them: their own bookkeeping is
/// found on the schema's search path.
fn harness(url: &str) -> AsyncConnectionWrapper<AsyncPgConnection> {
    let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::establish(url).unwrap();
    conn.batch_execute("SET search_path TO dispatch, public")
        .unwrap();
    conn
}

#[actix_web::test]
async fn migrations_revert_and_reapply_to_the_same_schema() {
    let api = Api::new().await;
    let url = api.db.url().to_owned();
    tokio::task::spawn_blocking(move || {
        let mut conn = harness(&url);
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

#[derive(diesel::QueryableByName, Debug, PartialEq)]
struct Waiting {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    id: i64,
    #[diesel(sql_type = diesel::sql_types::Timestamptz)]
    waiting_since: chrono::DateTime<chrono::Utc>,
}

/// `waiting_since` of the incidents stored before it existed comes from their own records: on
/// the demo data (every state, written through the API, which records it), reverting the
/// migration that added it and applying it again gives every incident the very instant the
/// writes had recorded.
#[actix_web::test]
async fn the_queue_migration_finds_each_incidents_waiting_time_as_the_writes_recorded_it() {
    const QUEUES: &str = "20261127100001";
    let api = Api::new().await;
    let url = api.db.url().to_owned();
    tokio::task::spawn_blocking(move || {
        let mut conn = harness(&url);
        let read = "SELECT id, waiting_since FROM dispatch.incidents ORDER BY id";
        let recorded: Vec<Waiting> = diesel::sql_query(read).load(&mut conn).unwrap();
        let states = count(
            &mut conn,
            "SELECT count(DISTINCT state) AS n FROM dispatch.incidents",
        );
        assert_eq!(states, 7, "the demo data has every state");
        loop {
            let reverted = conn.revert_last_migration(MIGRATIONS).unwrap();
            if reverted.to_string().replace('-', "").starts_with(QUEUES) {
                break;
            }
        }
        conn.run_pending_migrations(MIGRATIONS).unwrap();
        let backfilled: Vec<Waiting> = diesel::sql_query(read).load(&mut conn).unwrap();
        assert_eq!(backfilled.len(), recorded.len());
        assert_eq!(backfilled, recorded);
    })
    .await
    .unwrap();
}

#[derive(diesel::QueryableByName, Debug)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

fn count(conn: &mut AsyncConnectionWrapper<AsyncPgConnection>, sql: &str) -> i64 {
    diesel::sql_query(sql)
        .get_result::<Count>(conn)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .n
}

fn run(cmd: &mut std::process::Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The schema's functions work from a session that does not have `dispatch` on its path,
/// as psql by hand, ANALYZE and pg_restore have: a dump of a seeded database restores with
/// every index, and the restored copy answers queries under the default path.
#[actix_web::test]
async fn the_schema_works_without_it_on_the_search_path_and_survives_dump_and_restore() {
    let api = Api::new().await;
    let copy = common::test_support::TestDb::blank().await;
    let (source, target) = (api.db.url().to_owned(), copy.url().to_owned());
    tokio::task::spawn_blocking(move || {
        let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::establish(&source).unwrap();
        let users = count(&mut conn, "SELECT count(*) AS n FROM dispatch.users");
        assert!(users > 0);
        conn.batch_execute("ANALYZE dispatch.users, dispatch.mobile_units")
            .unwrap();
        // The query the "Send to" screen runs, written out with schema names.
        let ordered = count(
            &mut conn,
            "SELECT count(*) AS n FROM (SELECT id FROM dispatch.users
               WHERE dispatch.search_key(descriptive_name) LIKE '%a%'
               ORDER BY dispatch.search_order(descriptive_name), id LIMIT 20) s",
        );
        assert!(ordered > 0);

        // pg_dump | pg_restore, as an operator moves a database.
        let mut dump = std::process::Command::new("pg_dump")
            .args(["--format=custom", "--no-owner", &source])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("pg_dump");
        run(std::process::Command::new("pg_restore")
            .args(["--exit-on-error", "--no-owner", "--dbname", &target])
            .stdin(dump.stdout.take().unwrap()));
        assert!(dump.wait().unwrap().success(), "pg_dump failed");

        let mut restored = AsyncConnectionWrapper::<AsyncPgConnection>::establish(&target).unwrap();
        assert_eq!(
            count(&mut restored, "SELECT count(*) AS n FROM dispatch.users"),
            users
        );
        let indexes = count(
            &mut restored,
            "SELECT count(*) AS n FROM pg_indexes
              WHERE schemaname = 'dispatch' AND indexname = 'users_name_order'",
        );
        assert_eq!(indexes, 1);
    })
    .await
    .unwrap();
}

#[derive(diesel::QueryableByName, Debug)]
struct Decided {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    incident_id: i64,
}

/// A decision stored without notes before the migration (`''`, the old column's default)
/// has none after it: `null` in the read, as a decision recorded now.
#[actix_web::test]
async fn the_notes_migration_turns_an_empty_decisions_notes_into_none() {
    const NOTES: &str = "20261129500001";
    let api = Api::new().await;
    let url = api.db.url().to_owned();
    let incident = tokio::task::spawn_blocking(move || {
        let mut conn = harness(&url);
        loop {
            let reverted = conn.revert_last_migration(MIGRATIONS).unwrap();
            if reverted.to_string().replace('-', "").starts_with(NOTES) {
                break;
            }
        }
        let decided: Decided = diesel::sql_query(
            "UPDATE dispatch.technical_decisions SET notes = ''
              WHERE id = (SELECT min(id) FROM dispatch.technical_decisions)
             RETURNING incident_id",
        )
        .get_result(&mut conn)
        .unwrap();
        conn.run_pending_migrations(MIGRATIONS).unwrap();
        let empty = count(
            &mut conn,
            "SELECT count(*) AS n FROM dispatch.technical_decisions WHERE notes = ''",
        );
        assert_eq!(empty, 0);
        decided.incident_id
    })
    .await
    .unwrap();
    let read = api
        .get(
            "regulador",
            &format!("/technical-decision/incident/{incident}"),
        )
        .await;
    let first = &read.ok()[0];
    assert_eq!(first["notes"], serde_json::Value::Null, "{first}");
}

/// The entries a row per read held before the log became a row per batch are all kept, in
/// their order, a batch per transaction that wrote them (docs/dispatch-access-log.md, "How
/// it is stored"); the incident's listing shows them with the readers' names.
#[actix_web::test]
async fn the_batches_migration_keeps_every_entry_a_batch_per_transaction() {
    const BATCHES: &str = "20261129600001";
    let api = Api::new().await;
    let url = api.db.url().to_owned();
    let (tarm, regulador) = (api.id("tarm"), api.id("regulador"));
    let incident = tokio::task::spawn_blocking(move || {
        let mut conn = harness(&url);
        loop {
            let reverted = conn.revert_last_migration(MIGRATIONS).unwrap();
            if reverted.to_string().replace('-', "").starts_with(BATCHES) {
                break;
            }
        }
        let incident = count(&mut conn, "SELECT min(id) AS n FROM dispatch.incidents");
        // Two batches the writer committed: three reads, then one.
        conn.batch_execute(&format!(
            "INSERT INTO dispatch.patient_access_log (incident_id, user_id, route, at) VALUES
               ({incident}, {tarm}, 'GET /incident/{{id}}', '2026-11-20T10:00:00Z'),
               ({incident}, {regulador}, 'GET /incident/{{id}}/regulation', '2026-11-20T10:00:01Z'),
               ({incident}, {tarm}, 'GET /incident/{{id}}/timeline', '2026-11-20T10:00:02Z')"
        ))
        .unwrap();
        conn.batch_execute(&format!(
            "INSERT INTO dispatch.patient_access_log (incident_id, user_id, route, at) VALUES
               ({incident}, {regulador}, 'GET /incident/{{id}}', '2026-11-20T11:00:00Z')"
        ))
        .unwrap();
        conn.run_pending_migrations(MIGRATIONS).unwrap();
        let batches = count(
            &mut conn,
            "SELECT count(*) AS n FROM dispatch.patient_access_batches",
        );
        assert_eq!(batches, 2);
        incident
    })
    .await
    .unwrap();
    let listed = api
        .get("admin", &format!("/incident/{incident}/access-log"))
        .await;
    let entries: Vec<(String, String, String)> = listed.ok()["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["at"].as_str().unwrap().to_owned(),
                e["user"]["descriptive_name"].as_str().unwrap().to_owned(),
                e["route"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let names: std::collections::HashMap<i64, String> = {
        use diesel::prelude::*;
        use dispatch_api::schema::dispatch::users;
        let query = users::table.select((users::id, users::descriptive_name));
        diesel_async::RunQueryDsl::load::<(i64, String)>(query, &mut api.conn().await)
            .await
            .unwrap()
            .into_iter()
            .collect()
    };
    let name = |login: &str| names[&api.id(login)].clone();
    assert_eq!(
        entries,
        vec![
            (
                "2026-11-20T10:00:00Z".to_owned(),
                name("tarm"),
                "GET /incident/{id}".to_owned()
            ),
            (
                "2026-11-20T10:00:01Z".to_owned(),
                name("regulador"),
                "GET /incident/{id}/regulation".to_owned()
            ),
            (
                "2026-11-20T10:00:02Z".to_owned(),
                name("tarm"),
                "GET /incident/{id}/timeline".to_owned()
            ),
            (
                "2026-11-20T11:00:00Z".to_owned(),
                name("regulador"),
                "GET /incident/{id}".to_owned()
            ),
        ]
    );
}
