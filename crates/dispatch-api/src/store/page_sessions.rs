//! The manager page's sessions (`manager::session`, migration 2026-11-28-300001): one row per
//! sign-in, found by its id's SHA-256 (`common::pages::SessionId::hash`); the id itself is
//! never stored.

use chrono::{DateTime, Utc};
use common::pages::SessionTimes;
use diesel::prelude::*;
use diesel::result::Error;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::domain::user::Profile;
use crate::schema::dispatch::page_sessions as s;

/// A stored session: whose it is and its times.
#[derive(Debug, Clone)]
pub struct Stored {
    pub user_id: i64,
    pub times: SessionTimes,
}

/// Records a session of `user_id` (with `profile`) signed in at `now`.
pub async fn create(
    mut conn: &AsyncPgConnection,
    hash: &[u8],
    user_id: i64,
    profile: Profile,
    now: DateTime<Utc>,
    expires_at: DateTime<Utc>,
) -> Result<(), Error> {
    diesel::insert_into(s::table)
        .values((
            s::id_hash.eq(hash),
            s::user_id.eq(user_id),
            s::profile.eq(profile),
            s::created_at.eq(now),
            s::last_seen_at.eq(now),
            s::expires_at.eq(expires_at),
        ))
        .execute(&mut conn)
        .await
        .map(drop)
}

/// The session whose id hashes to `hash`; one statement on the primary key.
pub async fn find(mut conn: &AsyncPgConnection, hash: &[u8]) -> Result<Option<Stored>, Error> {
    s::table
        .find(hash)
        .select((s::user_id, s::last_seen_at, s::expires_at, s::revoked_at))
        .first::<(i64, DateTime<Utc>, DateTime<Utc>, Option<DateTime<Utc>>)>(&mut conn)
        .await
        .optional()
        .map(|row| {
            row.map(|(user_id, last_seen_at, expires_at, revoked_at)| Stored {
                user_id,
                times: SessionTimes {
                    last_seen_at,
                    expires_at,
                    revoked_at,
                },
            })
        })
}

/// The session was used at `now` (never moved back).
pub async fn touch(
    mut conn: &AsyncPgConnection,
    hash: &[u8],
    now: DateTime<Utc>,
) -> Result<(), Error> {
    diesel::update(s::table.find(hash).filter(s::last_seen_at.lt(now)))
        .set(s::last_seen_at.eq(now))
        .execute(&mut conn)
        .await
        .map(drop)
}

/// Ends the session at `now` (signed out, or its user no longer active); a session already
/// ended keeps its first end.
pub async fn revoke(
    mut conn: &AsyncPgConnection,
    hash: &[u8],
    now: DateTime<Utc>,
) -> Result<(), Error> {
    diesel::update(s::table.find(hash).filter(s::revoked_at.is_null()))
        .set(s::revoked_at.eq(now))
        .execute(&mut conn)
        .await
        .map(drop)
}

/// Deletes the sessions that ended by `now`: revoked, past their end, or not seen since
/// `idle_before`. How many.
pub async fn prune(
    mut conn: &AsyncPgConnection,
    now: DateTime<Utc>,
    idle_before: DateTime<Utc>,
) -> Result<usize, Error> {
    diesel::delete(
        s::table.filter(
            s::revoked_at
                .is_not_null()
                .or(s::expires_at.le(now))
                .or(s::last_seen_at.lt(idle_before)),
        ),
    )
    .execute(&mut conn)
    .await
}
