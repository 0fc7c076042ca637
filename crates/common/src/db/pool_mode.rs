//! What hands out the connections of `DATABASE_URL` (`DATABASE_POOL_MODE`), and what a
//! service does differently behind a transaction pooler (docs/operations.md, "Transaction
//! poolers").
//!
//! A transaction pooler (PgBouncer's `pool_mode = transaction`, RDS Proxy, Odyssey) gives each
//! transaction, and each statement outside one, whichever server connection is free. So:
//! - nothing may rest on a session's state: no `SET` but those the pooler carries itself
//!   (`application_name`, `TimeZone`, `client_encoding`), no named prepared statement (the
//!   next round trip may reach a server that never saw it). The pool then sends every
//!   statement as the unnamed one, parsed, bound and run in a single round trip (the
//!   patched `diesel-async`, `patches/diesel-async`), and the services name every table with
//!   its schema instead of relying on `search_path`;
//! - `LISTEN` hears nothing and a session advisory lock (the migrations') may stay held by an
//!   idle server connection: both go over `DATABASE_DIRECT_URL`, a session of its own.

pub use crate::config::PoolMode;

/// Whether a server error says that a named prepared statement went missing or collided:
/// what a session-mode pool sees when `DATABASE_URL` is in fact a transaction pooler
/// (SQLSTATE 26000 `invalid_sql_statement_name`, 42P05 `duplicate_prepared_statement`).
pub fn is_pooler_symptom(message: &str) -> bool {
    message.starts_with("prepared statement \"")
        && (message.ends_with("does not exist") || message.ends_with("already exists"))
}

/// What the log says when [`is_pooler_symptom`]: the setting that fixes it.
pub const POOLER_HINT: &str = "DATABASE_URL looks like a transaction pooler (a prepared \
    statement vanished or collided): set DATABASE_POOL_MODE=transaction and DATABASE_DIRECT_URL \
    (docs/operations.md, \"Transaction poolers\")";

/// Whether `url` is a transaction (or statement) pooler, asked at start in session mode: two
/// connections of a pooler in transaction mode are served by one PostgreSQL backend in turn
/// (it lends the server connection it just got back, PgBouncer's default), and one connection
/// may be served by several; a server or a session pooler never does either. `None` when it
/// cannot be asked (the migrations then say why the server cannot be used).
pub async fn is_transaction_pooler(url: &str) -> Option<bool> {
    use diesel_async::RunQueryDsl;

    async fn pid(conn: &mut diesel_async::AsyncPgConnection) -> Option<i32> {
        diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(
            "pg_backend_pid()",
        ))
        .get_result::<i32>(conn)
        .await
        .ok()
    }
    let probe = async {
        let mut a = super::tls::connect(url).await.ok()?;
        let mut b = super::tls::connect(url).await.ok()?;
        for _ in 0..3 {
            let first = pid(&mut a).await?;
            let other = pid(&mut b).await?;
            let again = pid(&mut a).await?;
            if first == other || first != again {
                return Some(true);
            }
        }
        Some(false)
    };
    tokio::time::timeout(super::network::timeout() * 2, probe)
        .await
        .ok()
        .flatten()
}

/// What `serve` and `migrate` say, and stop with, when `DATABASE_URL` is a transaction
/// pooler in session mode ([`is_transaction_pooler`]).
pub const POOLER_AT_START: &str = "DATABASE_URL is a transaction pooler (two of its \
    connections were served by one PostgreSQL backend in turn), but DATABASE_POOL_MODE is \
    session: set DATABASE_POOL_MODE=transaction and DATABASE_DIRECT_URL to PostgreSQL itself \
    (docs/operations.md, \"Transaction poolers\")";

/// Behind a transaction pooler the pool sets no `statement_timeout` (it would stay on one
/// server connection): the database's own applies. Logs a warning when it is none, with
/// what to set, so a stuck statement cannot hold a request (and a server connection) for ever.
pub async fn warn_without_timeout(pool: &super::Pool) {
    use diesel::QueryableByName;
    use diesel_async::RunQueryDsl;

    #[derive(QueryableByName)]
    struct Timeout {
        #[diesel(sql_type = diesel::sql_types::Text)]
        statement_timeout: String,
    }
    let Ok(mut conn) = pool.get().await else {
        return;
    };
    match diesel::sql_query("SELECT current_setting('statement_timeout') AS statement_timeout")
        .get_result::<Timeout>(&mut conn)
        .await
    {
        Ok(t) if t.statement_timeout == "0" => tracing::warn!(
            "no statement_timeout through the transaction pooler: set one for the database's \
             user (ALTER ROLE <user> SET statement_timeout = '5s'; docs/operations.md, \
             \"Transaction poolers\")"
        ),
        Ok(t) => {
            tracing::info!(statement_timeout = %t.statement_timeout, "the database's statement timeout")
        }
        Err(e) => tracing::warn!(error = %e, "could not read the statement timeout"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transaction_pooler_needs_a_direct_url_of_its_own() {
        let url = "postgres://app@pooler:6432/app";
        assert_eq!(
            PoolMode::Session.direct_url(url, None).unwrap(),
            url,
            "a session pool listens over its own URL"
        );
        assert_eq!(
            PoolMode::Session
                .direct_url(url, Some("postgres://app@db/app".into()))
                .unwrap(),
            "postgres://app@db/app"
        );
        let missing = PoolMode::Transaction.direct_url(url, None).unwrap_err();
        assert!(
            missing.to_string().contains("DATABASE_DIRECT_URL"),
            "{missing}"
        );
        let same = PoolMode::Transaction
            .direct_url(url, Some(url.into()))
            .unwrap_err();
        assert!(
            same.to_string()
                .contains("is DATABASE_URL, the transaction pooler"),
            "{same}"
        );
        assert_eq!(
            PoolMode::Transaction
                .direct_url(url, Some("postgres://app@db/app".into()))
                .unwrap(),
            "postgres://app@db/app"
        );
        assert_eq!("transaction".parse(), Ok(PoolMode::Transaction));
        assert!("statement".parse::<PoolMode>().is_err());
    }

    #[test]
    fn the_pooler_symptoms_are_the_prepared_statement_errors() {
        assert!(is_pooler_symptom(
            "prepared statement \"s1\" already exists"
        ));
        assert!(is_pooler_symptom(
            "prepared statement \"s12\" does not exist"
        ));
        assert!(!is_pooler_symptom("relation \"incidents\" does not exist"));
    }
}
