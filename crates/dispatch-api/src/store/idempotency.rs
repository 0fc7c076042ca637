//! `Idempotency-Key` on POSTs: the first request with a key runs and its response is stored
//! in the same transaction as the write; a retry with the same key and the same request gets
//! the stored response and changes nothing; the same key with another request is 422
//! `idempotency_key_reused`. Keys are per user and kept 24 hours (pruned by the writes that
//! carry one). Only successes are stored: a refused request changed nothing, so its retry
//! simply runs again.

use actix_web::http::StatusCode;
use common::Problem;
use common::db::db_error;
use diesel::sql_types::{BigInt, Jsonb, Nullable, SmallInt, Text};
use diesel_async::{AnsiTransactionManager, AsyncPgConnection, RunQueryDsl, TransactionManager};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// How long a key is remembered.
pub const RETENTION: &str = "24 hours";

/// A response as it is stored and replayed.
#[derive(Debug, Clone)]
pub struct Stored {
    pub status: StatusCode,
    pub body: Value,
    pub location: Option<String>,
    pub etag: Option<String>,
    /// True when this is a stored response answered again.
    pub replayed: bool,
}

/// The key of one request: who, which key, which route, and a hash of what was asked.
#[derive(Debug)]
pub struct Key {
    pub user_id: i64,
    pub key: String,
    pub route: String,
    pub request_hash: String,
}

impl Key {
    pub fn new(user_id: i64, key: String, route: String, request: &str) -> Self {
        let hash = Sha256::digest(request.as_bytes());
        let request_hash = hash.iter().map(|b| format!("{b:02x}")).collect();
        Self {
            user_id,
            key,
            route,
            request_hash,
        }
    }
}

#[derive(diesel::QueryableByName)]
struct Row {
    #[diesel(sql_type = Text)]
    route: String,
    #[diesel(sql_type = Text)]
    request_hash: String,
    #[diesel(sql_type = SmallInt)]
    status: i16,
    #[diesel(sql_type = Jsonb)]
    body: Value,
    #[diesel(sql_type = Nullable<Text>)]
    location: Option<String>,
}

/// Runs `write` once per key. Without a key it just runs. With one, everything happens in
/// one transaction: the key is claimed first (a concurrent request with the same key waits
/// on that row, then replays), the write runs (its own transaction becomes a savepoint), and
/// its response is stored.
pub async fn once<F>(
    conn: &mut AsyncPgConnection,
    key: Option<Key>,
    write: F,
) -> Result<Stored, Problem>
where
    F: AsyncFnOnce(&mut AsyncPgConnection) -> Result<Stored, Problem>,
{
    let Some(key) = key else {
        return write(conn).await;
    };
    AnsiTransactionManager::begin_transaction(conn)
        .await
        .map_err(db_error)?;
    let outcome = claim_and_write(conn, &key, write).await;
    match outcome {
        Ok(stored) => {
            AnsiTransactionManager::commit_transaction(conn)
                .await
                .map_err(db_error)?;
            Ok(stored)
        }
        Err(p) => {
            let _ = AnsiTransactionManager::rollback_transaction(conn).await;
            Err(p)
        }
    }
}

async fn claim_and_write<F>(
    conn: &mut AsyncPgConnection,
    key: &Key,
    write: F,
) -> Result<Stored, Problem>
where
    F: AsyncFnOnce(&mut AsyncPgConnection) -> Result<Stored, Problem>,
{
    diesel::sql_query(format!(
        "DELETE FROM idempotency_keys WHERE created_at < now() - interval '{RETENTION}'"
    ))
    .execute(conn)
    .await
    .map_err(db_error)?;
    let claimed = diesel::sql_query(
        "INSERT INTO idempotency_keys (user_id, key, route, request_hash, status, body) \
         VALUES ($1, $2, $3, $4, 0, 'null') ON CONFLICT DO NOTHING",
    )
    .bind::<BigInt, _>(key.user_id)
    .bind::<Text, _>(&key.key)
    .bind::<Text, _>(&key.route)
    .bind::<Text, _>(&key.request_hash)
    .execute(conn)
    .await
    .map_err(db_error)?;
    if claimed == 0 {
        let row: Row = diesel::sql_query(
            "SELECT route, request_hash, status, body, location FROM idempotency_keys \
             WHERE user_id = $1 AND key = $2",
        )
        .bind::<BigInt, _>(key.user_id)
        .bind::<Text, _>(&key.key)
        .get_result(conn)
        .await
        .map_err(db_error)?;
        if row.route != key.route || row.request_hash != key.request_hash {
            return Err(Problem::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "idempotency_key_reused",
                "this Idempotency-Key was used for another request; use a new key per request",
            ));
        }
        return Ok(Stored {
            status: StatusCode::from_u16(row.status as u16).unwrap_or(StatusCode::OK),
            etag: etag_of(&row.body),
            body: row.body,
            location: row.location,
            replayed: true,
        });
    }
    let stored = write(conn).await?;
    diesel::sql_query(
        "UPDATE idempotency_keys SET status = $3, body = $4, location = $5 \
         WHERE user_id = $1 AND key = $2",
    )
    .bind::<BigInt, _>(key.user_id)
    .bind::<Text, _>(&key.key)
    .bind::<SmallInt, _>(stored.status.as_u16() as i16)
    .bind::<Jsonb, _>(&stored.body)
    .bind::<Nullable<Text>, _>(stored.location.as_deref())
    .execute(conn)
    .await
    .map_err(db_error)?;
    Ok(stored)
}

/// The incident version a write answered, as its ETag.
pub fn etag_of(body: &Value) -> Option<String> {
    body.get("version")
        .or_else(|| body.get("incident_version"))
        .and_then(Value::as_i64)
        .map(|v| format!("\"{v}\""))
}
