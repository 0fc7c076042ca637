//! diesel-async's statement cache, as the workspace's patch of it has it
//! (patches/diesel-async/PATCHES.md, "No SQL built for a statement cached by its query's
//! type"): a query identified by its type is written as SQL once, when its statement is
//! prepared, and run from the cache afterwards without its SQL being built again, as diesel's
//! synchronous `PgConnection` does. A query cached by its SQL, and every query with the cache
//! disabled (transaction poolers), still has its SQL built on every run.
//!
//! Written for upstream: only diesel, diesel-async and `DATABASE_URL` (no table, no schema).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::test_support::server_url;
use diesel::connection::{CacheSize, InstrumentationEvent};
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::Integer;
use diesel::{IntoSql, QueryDsl, QueryResult};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

/// The query it wraps, counting how often its SQL is built (`to_sql`, which a connection
/// calls to write a statement's text; the binds are collected by `walk_ast`).
struct CountingSql<Q> {
    query: Q,
    built: SqlBuilds,
}

/// How many times the SQL of the queries sharing it was built.
#[derive(Clone, Default)]
struct SqlBuilds(Arc<AtomicUsize>);

impl SqlBuilds {
    fn count(&self) -> usize {
        AtomicUsize::load(&self.0, Ordering::SeqCst)
    }
}

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for CountingSql<Q> {
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.query.walk_ast(pass)
    }

    fn to_sql(&self, out: &mut diesel::pg::PgQueryBuilder, backend: &Pg) -> QueryResult<()> {
        self.built.0.fetch_add(1, Ordering::SeqCst);
        self.query.to_sql(out, backend)
    }
}

impl<Q: QueryId> QueryId for CountingSql<Q> {
    type QueryId = Q::QueryId;
    const HAS_STATIC_QUERY_ID: bool = Q::HAS_STATIC_QUERY_ID;
}

impl<Q: Query> Query for CountingSql<Q> {
    type SqlType = Q::SqlType;
}

/// `SELECT $1 + 1`, identified by its type.
fn plus_one(
    value: i32,
    built: &SqlBuilds,
) -> CountingSql<impl Query<SqlType = Integer> + QueryFragment<Pg> + QueryId + Send> {
    CountingSql {
        query: diesel::select(value.into_sql::<Integer>() + 1),
        built: built.clone(),
    }
}

/// The same, boxed: its SQL may change without its type changing, so it is cached by its SQL.
fn plus_one_boxed(
    value: i32,
    built: &SqlBuilds,
) -> CountingSql<impl Query<SqlType = Integer> + QueryFragment<Pg> + QueryId + Send> {
    CountingSql {
        query: diesel::select(value.into_sql::<Integer>() + 1).into_boxed::<Pg>(),
        built: built.clone(),
    }
}

/// What the connection's instrumentation heard: the SQL of each statement cached, and of
/// each query finished.
#[derive(Default)]
struct Heard {
    cached: Vec<String>,
    finished: Vec<String>,
}

async fn connection() -> (AsyncPgConnection, Arc<Mutex<Heard>>) {
    let mut conn = AsyncPgConnection::establish(&server_url()).await.unwrap();
    let heard = Arc::new(Mutex::new(Heard::default()));
    let sink = Arc::clone(&heard);
    conn.set_instrumentation(move |event: InstrumentationEvent<'_>| {
        let mut heard = sink.lock().unwrap();
        match event {
            InstrumentationEvent::CacheQuery { sql, .. } => heard.cached.push(sql.to_owned()),
            InstrumentationEvent::FinishQuery { query, error, .. } => {
                assert!(error.is_none(), "{query}: {error:?}");
                heard.finished.push(query.to_string());
            }
            _ => {}
        }
    });
    (conn, heard)
}

#[tokio::test]
async fn a_statement_cached_by_its_type_is_run_without_building_its_sql_again() {
    let (mut conn, heard) = connection().await;
    let built = SqlBuilds::default();

    let mut results = Vec::new();
    for value in 1..=5 {
        results.push(
            plus_one(value, &built)
                .get_result::<i32>(&mut conn)
                .await
                .unwrap(),
        );
    }

    // Each run bound its own value to the one statement.
    assert_eq!(results, [2, 3, 4, 5, 6]);
    assert_eq!(built.count(), 1, "SQL built once, to prepare");
    let heard = heard.lock().unwrap();
    assert_eq!(heard.cached, ["SELECT ($1 + $2)"]);
    // The instrumentation still sees every run's SQL.
    assert_eq!(heard.finished, vec!["SELECT ($1 + $2)"; 5]);
}

#[tokio::test]
async fn pipelined_runs_of_a_cached_statement_build_no_sql() {
    let (conn, heard) = connection().await;
    let built = SqlBuilds::default();
    let pair = |a, b| {
        futures_util::future::try_join(
            plus_one(a, &built).get_result::<i32>(&mut &conn),
            plus_one(b, &built).get_result::<i32>(&mut &conn),
        )
    };

    // Both futures are made before the statement is cached: each builds the SQL.
    assert_eq!(pair(10, 20).await.unwrap(), (11, 21));
    let before = built.count();
    assert_eq!(pair(30, 40).await.unwrap(), (31, 41));
    assert_eq!(pair(50, 60).await.unwrap(), (51, 61));

    assert_eq!(built.count(), before, "no SQL built once cached");
    assert_eq!(heard.lock().unwrap().cached, ["SELECT ($1 + $2)"]);
}

#[tokio::test]
async fn a_statement_cached_by_its_sql_has_its_sql_built_on_every_run() {
    let (mut conn, heard) = connection().await;
    let built = SqlBuilds::default();

    let mut results = Vec::new();
    for value in 1..=3 {
        results.push(
            plus_one_boxed(value, &built)
                .get_result::<i32>(&mut conn)
                .await
                .unwrap(),
        );
    }

    assert_eq!(results, [2, 3, 4]);
    assert_eq!(built.count(), 3, "the SQL is the cache's key");
    assert_eq!(heard.lock().unwrap().cached, ["SELECT ($1 + $2)"]);
}

#[tokio::test]
async fn with_the_cache_disabled_every_run_sends_its_sql() {
    let (mut conn, heard) = connection().await;
    conn.set_prepared_statement_cache_size(CacheSize::Disabled);
    let built = SqlBuilds::default();

    let mut results = Vec::new();
    for value in 1..=3 {
        results.push(
            plus_one(value, &built)
                .get_result::<i32>(&mut conn)
                .await
                .unwrap(),
        );
    }

    assert_eq!(results, [2, 3, 4]);
    assert_eq!(built.count(), 3, "the unnamed statement is sent as text");
    let heard = heard.lock().unwrap();
    assert!(
        heard.cached.is_empty(),
        "nothing cached: {:?}",
        heard.cached
    );
    assert_eq!(heard.finished, vec!["SELECT ($1 + $2)"; 3]);
}

/// `SELECT` of the names of the session's prepared statements, marked unsafe to cache when
/// asked (as diesel marks an `UPDATE`, an insert of a `Vec` or an SQL literal). Run by a
/// named statement, it sees its own name; run as the unnamed statement, it sees none.
struct PreparedStatementNames {
    cacheable: bool,
}

impl QueryFragment<Pg> for PreparedStatementNames {
    fn walk_ast<'b>(&'b self, mut pass: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        if !self.cacheable {
            pass.unsafe_to_cache_prepared();
        }
        pass.push_sql("SELECT ARRAY(SELECT name::text FROM pg_prepared_statements ORDER BY name)");
        Ok(())
    }
}

impl QueryId for PreparedStatementNames {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl Query for PreparedStatementNames {
    type SqlType = diesel::sql_types::Array<diesel::sql_types::Text>;
}

#[tokio::test]
async fn a_statement_unsafe_to_cache_is_sent_unnamed_and_leaves_no_named_statement() {
    let (mut conn, heard) = connection().await;

    // Not cacheable: sent as the unnamed statement, it finds no named statement, its own
    // included, however often it runs.
    for _ in 0..3 {
        let names = PreparedStatementNames { cacheable: false }
            .get_result::<Vec<String>>(&mut conn)
            .await
            .unwrap();
        assert_eq!(names, Vec::<String>::new(), "nothing prepared under a name");
    }
    assert!(heard.lock().unwrap().cached.is_empty());

    // The same text, cacheable: prepared under a name and kept, so it finds itself.
    let names = PreparedStatementNames { cacheable: true }
        .get_result::<Vec<String>>(&mut conn)
        .await
        .unwrap();
    assert_eq!(names.len(), 1, "its own named statement: {names:?}");
    assert_eq!(heard.lock().unwrap().cached.len(), 1);
}

/// `common::db::cached_by_text`: a statement diesel would not cache, prepared and cached by its
/// SQL text.
#[tokio::test]
async fn a_statement_cached_by_its_text_is_prepared_once_and_run_from_the_cache() {
    let (mut conn, heard) = connection().await;

    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(
            common::db::cached_by_text(PreparedStatementNames { cacheable: false })
                .get_result::<Vec<String>>(&mut conn)
                .await
                .unwrap(),
        );
    }

    // Prepared under a name on the first run, and that one statement ran every time.
    assert_eq!(seen[0].len(), 1, "its own named statement: {seen:?}");
    assert!(seen.iter().all(|names| names == &seen[0]), "{seen:?}");
    assert_eq!(
        heard.lock().unwrap().cached,
        ["SELECT ARRAY(SELECT name::text FROM pg_prepared_statements ORDER BY name)"]
    );
}
