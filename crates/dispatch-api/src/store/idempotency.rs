//! `Idempotency-Key` on POSTs: the first request with a key runs and its response is stored
//! in the same transaction as the write; a retry with the same key and the same request gets
//! the stored response and changes nothing; the same key with another request is 422
//! `idempotency_key_reused`. Keys are per user and kept 24 hours (pruned by the writes that
//! carry one). Only successes are stored: a refused request changed nothing, so its retry
//! simply runs again.

use diesel::dsl::now;
use diesel::pg::expression::extensions::IntervalDsl;
use diesel::prelude::*;
use diesel::sql_types::Timestamptz;
use diesel_async::{AnsiTransactionManager, AsyncPgConnection, RunQueryDsl, TransactionManager};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::domain::Refusal;
use crate::schema::dispatch::idempotency_keys as keys;
use crate::store::error::StoreError;

/// How long a key is remembered, in hours.
pub const RETENTION_HOURS: i32 = 24;

/// A response as it is stored and replayed.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The HTTP status it answered, as a number (the store names no HTTP type).
    pub status: u16,
    pub body: Value,
    pub location: Option<String>,
    pub etag: Option<String>,
    /// True when this is a stored response answered again.
    pub replayed: bool,
}

/// The key of one request: who, which key, which route, and a hash of what was asked (the
/// body's JSON with its keys sorted, so neither a field's place in the body nor a renamed
/// Rust type changes it).
#[derive(Debug)]
pub struct Key {
    pub user_id: i64,
    pub key: String,
    pub route: String,
    pub request_hash: String,
}

impl Key {
    pub fn new(user_id: i64, key: String, route: String, body: &[u8]) -> Self {
        let hash = Sha256::digest(canonical(body).as_bytes());
        let request_hash = hash.iter().map(|b| format!("{b:02x}")).collect();
        Self {
            user_id,
            key,
            route,
            request_hash,
        }
    }
}

/// The body as one canonical text: its JSON value re-serialised, keys sorted and no
/// insignificant whitespace (`serde_json`'s map is ordered by key). Bytes that are not JSON
/// (no write takes those) are hashed as they are.
pub fn canonical(body: &[u8]) -> String {
    match serde_json::from_slice::<Value>(body) {
        Ok(value) => value.to_string(),
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    }
}

/// A claimed key as stored: what it was used for and what it answered.
#[derive(Queryable, Selectable)]
#[diesel(table_name = keys, check_for_backend(diesel::pg::Pg))]
struct Row {
    route: String,
    request_hash: String,
    status: i16,
    body: Value,
    location: Option<String>,
}

/// Runs `write` once per key. Without a key it just runs. With one, everything happens in
/// one transaction: the key is claimed first (a concurrent request with the same key waits
/// on that row, then replays), the write runs (its own transaction becomes a savepoint), and
/// its response is stored. `E` is the write's own error (the routes' `Error`), which the
/// store's turns into.
pub async fn once<F, E>(
    conn: &mut AsyncPgConnection,
    key: Option<Key>,
    write: F,
) -> Result<Stored, E>
where
    F: AsyncFnOnce(&mut AsyncPgConnection) -> Result<Stored, E>,
    E: From<StoreError>,
{
    let Some(key) = key else {
        return write(conn).await;
    };
    AnsiTransactionManager::begin_transaction(conn)
        .await
        .map_err(StoreError::from)?;
    let outcome = claim_and_write(conn, &key, write).await;
    match outcome {
        Ok(stored) => {
            AnsiTransactionManager::commit_transaction(conn)
                .await
                .map_err(StoreError::from)?;
            Ok(stored)
        }
        Err(p) => {
            let _ = AnsiTransactionManager::rollback_transaction(conn).await;
            Err(p)
        }
    }
}

async fn claim_and_write<F, E>(
    conn: &mut AsyncPgConnection,
    key: &Key,
    write: F,
) -> Result<Stored, E>
where
    F: AsyncFnOnce(&mut AsyncPgConnection) -> Result<Stored, E>,
    E: From<StoreError>,
{
    let stored = match claim(conn, key).await? {
        Some(replayed) => return Ok(replayed),
        None => write(conn).await?,
    };
    record(conn, key, &stored).await?;
    Ok(stored)
}

/// Claims the key; the stored response when it was claimed before by the same request.
async fn claim(conn: &mut AsyncPgConnection, key: &Key) -> Result<Option<Stored>, StoreError> {
    let expired = now.into_sql::<Timestamptz>() - RETENTION_HOURS.hours();
    diesel::delete(keys::table.filter(keys::created_at.lt(expired)))
        .execute(conn)
        .await?;
    let this = keys::user_id.eq(key.user_id).and(keys::key.eq(&key.key));
    let claimed = diesel::insert_into(keys::table)
        .values((
            keys::user_id.eq(key.user_id),
            keys::key.eq(&key.key),
            keys::route.eq(&key.route),
            keys::request_hash.eq(&key.request_hash),
            keys::status.eq(0),
            keys::body.eq(Value::Null),
        ))
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    if claimed == 0 {
        let row: Row = keys::table
            .filter(this)
            .select(Row::as_select())
            .first(conn)
            .await?;
        if row.route != key.route || row.request_hash != key.request_hash {
            return Err(Refusal::IdempotencyKeyReused.into());
        }
        return Ok(Some(Stored {
            status: row.status as u16,
            etag: etag_of(&row.body),
            body: row.body,
            location: row.location,
            replayed: true,
        }));
    }
    Ok(None)
}

/// Stores the response of the write that claimed the key.
async fn record(
    conn: &mut AsyncPgConnection,
    key: &Key,
    stored: &Stored,
) -> Result<(), StoreError> {
    let this = keys::user_id.eq(key.user_id).and(keys::key.eq(&key.key));
    diesel::update(keys::table.filter(this))
        .set((
            keys::status.eq(stored.status as i16),
            keys::body.eq(&stored.body),
            keys::location.eq(stored.location.as_deref()),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

/// The incident version a write answered, as its ETag.
pub fn etag_of(body: &Value) -> Option<String> {
    body.get("version")
        // Answers stored before the dispatch writes named it `version` too.
        .or_else(|| body.get("incident_version"))
        .and_then(Value::as_i64)
        .map(|v| format!("\"{v}\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_is_the_json_with_its_keys_sorted() {
        let a = canonical(br#"{"b": 1, "a": [2, {"d": 3, "c": 4}]}"#);
        assert_eq!(a, r#"{"a":[2,{"c":4,"d":3}],"b":1}"#);
        let b = canonical(b"{\"a\":[2,{\"c\":4,\"d\":3}],\n\"b\":1}");
        assert_eq!(a, b);
        let key = |body: &[u8]| Key::new(1, "k".into(), "POST /incident".into(), body);
        assert_eq!(
            key(br#"{"x":1,"y":2}"#).request_hash,
            key(br#"{"y":2,"x":1}"#).request_hash
        );
        assert_ne!(
            key(br#"{"x":1}"#).request_hash,
            key(br#"{"x":2}"#).request_hash
        );
    }
}
