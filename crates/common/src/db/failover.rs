//! Failover without a restart: a server that refuses writes because it is a (hot) standby
//! or read-only is treated as unavailable, not as a bug.
//!
//! - A write refused with SQLSTATE 25006 (`read_only_sql_transaction`: "cannot execute
//!   INSERT in a read-only transaction", "... during recovery") is 503 `unavailable`
//!   ([`super::is_unavailable`]).
//! - Seeing such a refusal marks the moment ([`saw_read_only`]); every pooled connection
//!   opened before it is dropped at its next checkout ([`drop_stale`], the pool's
//!   `pre_recycle` hook) instead of being reused, so after a DNS or VIP switch, or with a
//!   multi-host URL and `target_session_attrs=read-write`, the pool reconnects to the new
//!   primary on the next requests.
//! - `/readyz` asks [`writable`]: 503 while the server cannot take writes.
//! - The `LISTEN` connection asks [`writable`] on connecting and at each heartbeat, and
//!   reconnects (announcing `Reconnected`, so its consumers resync) when it is false.
//!
//! The mark is per process, not per pool: a process with several pools reconnects them all,
//! which costs a few connections and is never wrong.

use std::sync::Mutex;
use std::time::Instant;

use deadpool::managed::{HookError, HookResult, Metrics};
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// The last time a read-only refusal was seen in this process.
static READ_ONLY_SEEN: Mutex<Option<Instant>> = Mutex::new(None);

/// Whether `e` is a write refused because the server is read-only (a standby in recovery,
/// or `default_transaction_read_only`), which a failover resolves.
pub fn is_read_only(e: &DieselError) -> bool {
    match e {
        DieselError::DatabaseError(kind, info) => {
            matches!(kind, DatabaseErrorKind::ReadOnlyTransaction) || {
                let m = info.message();
                m.contains("read-only transaction")
                    || m.contains("during recovery")
                    || m.contains("recovery is in progress")
                    || m.contains("hot standby")
            }
        }
        _ => false,
    }
}

/// Records that the server refused a write as read-only: the connections open now are
/// dropped at their next checkout.
pub fn saw_read_only() {
    let mut seen = READ_ONLY_SEEN.lock().unwrap_or_else(|p| p.into_inner());
    *seen = Some(Instant::now());
}

/// The pool's `pre_recycle` hook: a connection opened before the last read-only refusal is
/// not reused (it may be held on a standby or a demoted primary).
pub fn drop_stale<C>(
    _conn: &mut C,
    metrics: &Metrics,
) -> HookResult<diesel_async::pooled_connection::PoolError> {
    let seen = *READ_ONLY_SEEN.lock().unwrap_or_else(|p| p.into_inner());
    match seen {
        Some(at) if metrics.created <= at => Err(HookError::Message(
            "connection opened before the server was found read-only".into(),
        )),
        _ => Ok(()),
    }
}

/// Whether the connection's server takes writes: not in recovery, and not read-only by
/// default. `Err` when the question cannot be asked (the connection is broken).
pub async fn writable(conn: &mut AsyncPgConnection) -> diesel::QueryResult<bool> {
    let read_only = diesel::select(diesel::dsl::sql::<diesel::sql_types::Bool>(
        "pg_is_in_recovery() OR current_setting('transaction_read_only')::bool",
    ))
    .get_result::<bool>(conn)
    .await?;
    if read_only {
        saw_read_only();
    }
    Ok(!read_only)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Info(&'static str);
    impl diesel::result::DatabaseErrorInformation for Info {
        fn message(&self) -> &str {
            self.0
        }
        fn details(&self) -> Option<&str> {
            None
        }
        fn hint(&self) -> Option<&str> {
            None
        }
        fn table_name(&self) -> Option<&str> {
            None
        }
        fn column_name(&self) -> Option<&str> {
            None
        }
        fn constraint_name(&self) -> Option<&str> {
            None
        }
        fn statement_position(&self) -> Option<i32> {
            None
        }
    }

    fn err(kind: DatabaseErrorKind, m: &'static str) -> DieselError {
        DieselError::DatabaseError(kind, Box::new(Info(m)))
    }

    #[test]
    fn read_only_refusals_are_recognised_and_other_errors_are_not() {
        for e in [
            err(
                DatabaseErrorKind::ReadOnlyTransaction,
                "cannot execute INSERT in a read-only transaction",
            ),
            err(
                DatabaseErrorKind::Unknown,
                "cannot execute nextval() in a read-only transaction",
            ),
            err(
                DatabaseErrorKind::Unknown,
                "cannot execute LISTEN during recovery",
            ),
            err(DatabaseErrorKind::Unknown, "recovery is in progress"),
        ] {
            assert!(is_read_only(&e), "{e}");
            assert!(super::super::is_unavailable(&e), "{e}");
        }
        for e in [
            err(DatabaseErrorKind::UniqueViolation, "duplicate key value"),
            err(DatabaseErrorKind::Unknown, "syntax error at or near"),
            DieselError::NotFound,
        ] {
            assert!(!is_read_only(&e), "{e}");
        }
    }
}
