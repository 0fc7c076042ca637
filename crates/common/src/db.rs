//! The PostgreSQL pool (diesel-async over the pure-Rust driver) and embedded migrations.
//!
//! Each service owns one schema, and its SQL names every table, sequence and function with
//! that schema (`dispatch.incidents`): nothing rests on a connection's `search_path`, which a
//! transaction pooler could not keep ([`pool_mode`]). The migrations alone run with the
//! schema on their path, so their SQL creates objects in it.

use std::time::Duration;

use diesel::connection::CacheSize;
use diesel::migration::MigrationSource;
use diesel::pg::Pg;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::pooled_connection::deadpool::{Object, Pool as DeadPool, PoolError};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use futures_util::FutureExt;

use crate::Problem;

mod cached_by_text;
pub mod failover;
pub mod network;
pub use cached_by_text::{CachedByText, MAX_TEXTS, cached_by_text};
pub mod pool_mode;
pub mod pool_size;
pub use pool_mode::PoolMode;
pub mod tls;
mod url;
pub use url::{DatabaseUrl, REACH_TIMEOUT, StartupError};

pub type Pool = DeadPool<AsyncPgConnection>;
pub type Conn = Object<AsyncPgConnection>;

/// How a service's pool behaves. Defaults suit a request path: a request waits at most
/// `wait_timeout` for a connection and a statement runs at most `statement_timeout`, so an
/// outage answers 503 quickly instead of hanging.
#[derive(Debug, Clone)]
pub struct PoolSettings {
    pub application_name: &'static str,
    /// Behind a transaction pooler, no session state and no named prepared statement.
    pub mode: PoolMode,
    pub max_size: usize,
    pub wait_timeout: Duration,
    pub connect_timeout: Duration,
    pub statement_timeout: Duration,
}

impl PoolSettings {
    pub fn new(application_name: &'static str) -> Self {
        assert!(
            application_name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "application name {application_name:?} must be a plain word"
        );
        Self {
            application_name,
            mode: PoolMode::Session,
            max_size: 16,
            wait_timeout: Duration::from_secs(2),
            connect_timeout: Duration::from_secs(2),
            statement_timeout: Duration::from_secs(5),
        }
    }
}

fn assert_identifier(schema: &str) {
    assert!(
        !schema.is_empty() && schema.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
        "schema name {schema:?} must be a lowercase identifier"
    );
}

/// Builds the pool. No connection is opened until the first request needs one, so a
/// service starts (and answers `/healthz`) while the database is still coming up.
///
/// Each connection names itself (`application_name`, which a transaction pooler carries
/// over to whichever server connection it hands out). In [`PoolMode::Session`] it also sets
/// its `statement_timeout` and caches its prepared statements; in
/// [`PoolMode::Transaction`] neither would survive the next transaction, so statements go
/// unprepared (the unnamed statement, one round trip each) and the timeout is the
/// database's (docs/operations.md, "Transaction poolers").
pub fn pool(database_url: &str, settings: &PoolSettings) -> anyhow::Result<Pool> {
    let mut setup_sql = format!("SET application_name TO '{}'", settings.application_name);
    if settings.mode == PoolMode::Session {
        setup_sql += &format!(
            "; SET statement_timeout TO {}",
            settings.statement_timeout.as_millis()
        );
    }
    let unprepared = settings.mode == PoolMode::Transaction;
    let connect_timeout = settings.connect_timeout;
    let mut config = ManagerConfig::<AsyncPgConnection>::default();
    // `Fast` recycling skips a round trip per checkout; a connection the server closed is
    // seen as broken by the driver and replaced.
    config.recycling_method = RecyclingMethod::Fast;
    config.custom_setup = Box::new(move |url: &str| {
        let url = url.to_owned();
        let setup_sql = setup_sql.clone();
        // Connecting and the setup together take at most `connect_timeout`, so a request
        // that must open a connection waits at most `wait_timeout` + `connect_timeout`
        // (docs/operations.md, "Database down").
        let open = async move {
            let mut conn = tls::establish(&url).await?;
            if unprepared {
                conn.set_prepared_statement_cache_size(CacheSize::Disabled);
            }
            conn.batch_execute(&setup_sql)
                .await
                .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
            Ok(conn)
        };
        async move {
            tokio::time::timeout(connect_timeout, open)
                .await
                .map_err(|_| {
                    diesel::ConnectionError::BadConnection("connecting timed out".into())
                })?
        }
        .boxed()
    });
    let manager = AsyncDieselConnectionManager::new_with_config(database_url, config);
    Ok(DeadPool::builder(manager)
        .max_size(settings.max_size)
        .wait_timeout(Some(settings.wait_timeout))
        .create_timeout(Some(settings.connect_timeout))
        .recycle_timeout(Some(Duration::from_secs(1)))
        .pre_recycle(deadpool::managed::Hook::sync_fn(failover::drop_stale))
        .runtime(deadpool::Runtime::Tokio1)
        .build()?)
}

/// What `/readyz` found about the pool's server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// A connection was had and its server takes writes.
    Ready,
    /// No connection within two seconds, or it broke.
    Unreachable,
    /// The server answers but takes no writes: a standby, or a primary being demoted.
    ReadOnly,
}

/// Whether a connection can be had within two seconds and its server takes writes (not
/// a standby, not read-only: [`failover::writable`]). A connection found on a read-only
/// server is dropped, not returned to the pool.
pub async fn readiness(pool: &Pool) -> Readiness {
    let check = async {
        let mut conn = pool.get().await.ok()?;
        let writable = failover::writable(&mut conn).await.ok()?;
        if !writable {
            drop(Object::take(conn));
        }
        Some(writable)
    };
    match tokio::time::timeout(Duration::from_secs(2), check).await {
        Ok(Some(true)) => Readiness::Ready,
        Ok(Some(false)) => Readiness::ReadOnly,
        Ok(None) | Err(_) => Readiness::Unreachable,
    }
}

/// True when [`readiness`] is [`Readiness::Ready`].
pub async fn ping(pool: &Pool) -> bool {
    readiness(pool).await == Readiness::Ready
}

/// A connection of its own for a task that requests wait on (the access log's writer): made
/// like the pool's (the same setup, TLS and timeouts) but outside its size, so it is had even
/// while every pooled connection is held by a request waiting for that task.
pub async fn dedicated(pool: &Pool) -> Result<AsyncPgConnection, PoolError> {
    use deadpool::managed::Manager as _;
    let create = pool.manager().create();
    match tokio::time::timeout(
        pool.timeouts().create.unwrap_or(Duration::from_secs(5)),
        create,
    )
    .await
    {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(e)) => Err(PoolError::Backend(e)),
        Err(_) => Err(PoolError::Timeout(deadpool::managed::TimeoutType::Create)),
    }
}

/// A connection for a request; an outage or an exhausted pool is 503.
pub async fn conn(pool: &Pool) -> Result<Conn, Problem> {
    pool.get().await.map_err(pool_error)
}

pub fn pool_error(e: PoolError) -> Problem {
    tracing::warn!(error = %e, "no database connection");
    Problem::unavailable()
}

/// Whether a diesel error means the database is out of reach (retryable) rather than a bug.
/// A write refused by a read-only server (a standby during a failover) is one; seeing it
/// also makes the pool drop its current connections ([`failover`]).
pub fn is_unavailable(e: &DieselError) -> bool {
    if failover::is_read_only(e) {
        failover::saw_read_only();
        return true;
    }
    match e {
        DieselError::DatabaseError(_, info) if pool_mode::is_pooler_symptom(info.message()) => {
            tracing::error!("{}", pool_mode::POOLER_HINT);
            true
        }
        DieselError::DatabaseError(kind, info) => {
            matches!(
                kind,
                DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand
            ) || {
                let m = info.message();
                m.contains("statement timeout")
                    || m.contains("terminating connection")
                    || m.contains("shutting down")
                    || m.contains("starting up")
                    || m.contains("connection closed")
                    || m.contains("too many clients")
            }
        }
        DieselError::BrokenTransactionManager => true,
        _ => false,
    }
}

/// Maps an unexpected diesel error to 503 (database unreachable) or 500 (logged, nothing
/// internal in the body). Domain errors (not found, conflicts) are mapped by the caller first.
pub fn db_error(e: DieselError) -> Problem {
    if is_unavailable(&e) {
        tracing::warn!(error = %e, "database unavailable");
        Problem::unavailable()
    } else {
        tracing::error!(error = %e, "database error");
        Problem::internal()
    }
}

/// Runs the pending migrations of `schema` and returns the versions applied. Runs on its
/// own thread (it blocks), under an advisory lock so replicas starting together migrate
/// once. The migrations bookkeeping table lives in the service's own schema.
pub fn migrate<S>(database_url: &str, schema: &str, migrations: S) -> anyhow::Result<Vec<String>>
where
    S: MigrationSource<Pg> + Send,
{
    assert_identifier(schema);
    std::thread::scope(|s| {
        s.spawn(|| blocking::migrate(database_url, schema, migrations))
            .join()
            .map_err(|_| anyhow::anyhow!("the migration thread panicked"))?
    })
    .map_err(explain_migration_error)
}

/// A migration's failure with what fixes it when the cause is the server's kind: a standby
/// (read-only) or a transaction pooler (prepared statements vanish or collide).
fn explain_migration_error(e: anyhow::Error) -> anyhow::Error {
    let text = format!("{e:#}");
    if text.contains("read-only transaction")
        || text.contains("during recovery")
        || text.contains("recovery is in progress")
    {
        e.context(
            "the database is read-only (a standby, or a primary being demoted): migrate \
             against the primary (promote it, or point DATABASE_DIRECT_URL / DATABASE_URL at it)",
        )
    } else if text.contains("prepared statement \"") {
        e.context(pool_mode::POOLER_HINT)
    } else {
        e
    }
}

/// Diesel's migration machinery is synchronous; it runs here over the async driver wrapped.
mod blocking {
    use diesel::RunQueryDsl;
    use diesel::connection::SimpleConnection;
    use diesel::migration::MigrationSource;
    use diesel::pg::Pg;
    use diesel_async::AsyncPgConnection;
    use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
    use diesel_migrations::MigrationHarness;

    pub(super) fn migrate<S: MigrationSource<Pg>>(
        database_url: &str,
        schema: &str,
        migrations: S,
    ) -> anyhow::Result<Vec<String>> {
        // The connection is made (with TLS, `super::tls`) and driven on a runtime of this
        // thread's own; the wrapper blocks on it through the handle `enter` sets.
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()?;
        let _entered = runtime.enter();
        let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::from(
            runtime.block_on(super::tls::establish(database_url))?,
        );
        let lock_key = format!("migrate:{schema}");
        diesel::sql_query("SELECT pg_advisory_lock(hashtext($1))")
            .bind::<diesel::sql_types::Text, _>(&lock_key)
            .execute(&mut conn)?;
        let result = conn
            .batch_execute(&format!(
                "CREATE SCHEMA IF NOT EXISTS {schema}; SET search_path TO {schema}, public"
            ))
            .map_err(anyhow::Error::from)
            .and_then(|()| {
                conn.run_pending_migrations(migrations)
                    .map(|v| v.iter().map(ToString::to_string).collect())
                    .map_err(|e| anyhow::anyhow!("migration failed: {e}"))
            });
        diesel::sql_query("SELECT pg_advisory_unlock(hashtext($1))")
            .bind::<diesel::sql_types::Text, _>(&lock_key)
            .execute(&mut conn)?;
        result
    }
}

/// `migrate` from async code.
pub async fn migrate_async<S>(
    database_url: String,
    schema: &'static str,
    migrations: S,
) -> anyhow::Result<Vec<String>>
where
    S: MigrationSource<Pg> + Send + 'static,
{
    tokio::task::spawn_blocking(move || migrate(&database_url, schema, migrations)).await?
}
