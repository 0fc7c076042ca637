//! Failed `/callback/auth` attempts per client, in PostgreSQL so every replica sees the same
//! counts (docs/proposal-callback.md, "Authentication"). A fixed window per client: the first
//! failure opens it, failures within it add up, a failure after it opens a new one.

use diesel::QueryResult;
use diesel::prelude::*;
use diesel::sql_types::{Double, Integer, Text};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

#[derive(QueryableByName)]
struct Seconds {
    #[diesel(sql_type = Double)]
    seconds: f64,
}

#[derive(QueryableByName)]
struct Failures {
    #[diesel(sql_type = Integer)]
    failures: i32,
}

/// Seconds until `client`'s window ends when it has `max_failures` or more failures in its
/// current window; None otherwise. One primary-key lookup.
pub async fn blocked_for(
    conn: &mut AsyncPgConnection,
    client: &str,
    max_failures: i32,
    window_secs: f64,
) -> QueryResult<Option<f64>> {
    diesel::sql_query(
        "SELECT extract(epoch FROM window_start + make_interval(secs => $3) - now())::float8 \
         AS seconds FROM proposal.auth_failures \
         WHERE client = $1 AND failures >= $2 AND window_start + make_interval(secs => $3) > now()",
    )
    .bind::<Text, _>(client)
    .bind::<Integer, _>(max_failures)
    .bind::<Double, _>(window_secs)
    .get_result::<Seconds>(conn)
    .await
    .optional()
    .map(|r| r.map(|s| s.seconds))
}

/// Counts one failure of `client` (one upsert); its failures in the current window.
pub async fn record_failure(
    conn: &mut AsyncPgConnection,
    client: &str,
    window_secs: f64,
) -> QueryResult<i32> {
    diesel::sql_query(
        "INSERT INTO proposal.auth_failures AS f (client, window_start, failures) VALUES ($1, now(), 1) \
         ON CONFLICT (client) DO UPDATE SET \
           window_start = CASE WHEN f.window_start + make_interval(secs => $2) <= now() \
                               THEN now() ELSE f.window_start END, \
           failures = CASE WHEN f.window_start + make_interval(secs => $2) <= now() \
                           THEN 1 ELSE f.failures + 1 END \
         RETURNING failures",
    )
    .bind::<Text, _>(client)
    .bind::<Double, _>(window_secs)
    .get_result::<Failures>(conn)
    .await
    .map(|r| r.failures)
}

/// Deletes the rows whose window has ended (they block nobody); how many.
pub async fn prune(conn: &mut AsyncPgConnection, window_secs: f64) -> QueryResult<usize> {
    diesel::sql_query(
        "DELETE FROM proposal.auth_failures WHERE window_start <= now() - make_interval(secs => $1)",
    )
    .bind::<Double, _>(window_secs)
    .execute(conn)
    .await
}
