//! The integrations console's sessions (`console::session`, migration 2026-11-28-300001): one
//! row per sign-in, found by its id's SHA-256 (`common::pages::SessionId::hash`); the id
//! itself is never stored.

use chrono::{DateTime, Utc};
use common::pages::SessionTimes;
use diesel::prelude::*;
use diesel::result::Error;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use crate::schema::proposal::console_sessions as s;

/// The role a console session is opened with: the admin tokens' only one.
pub const ADMIN_ROLE: &str = "admin";

/// A stored session: whose it is and its times.
#[derive(Debug, Clone)]
pub struct Stored {
    pub tenant: String,
    pub subject: String,
    pub role: String,
    pub times: SessionTimes,
}

/// Records a session of `subject`, admin of `tenant`, signed in at `now`.
pub async fn create(
    conn: &mut AsyncPgConnection,
    hash: &[u8],
    tenant: &str,
    subject: &str,
    now: DateTime<Utc>,
    expires_at: DateTime<Utc>,
) -> Result<(), Error> {
    diesel::insert_into(s::table)
        .values((
            s::id_hash.eq(hash),
            s::tenant_id.eq(tenant),
            s::subject.eq(subject),
            s::role.eq(ADMIN_ROLE),
            s::created_at.eq(now),
            s::last_seen_at.eq(now),
            s::expires_at.eq(expires_at),
        ))
        .execute(conn)
        .await
        .map(drop)
}

type Row = (
    String,
    String,
    String,
    DateTime<Utc>,
    DateTime<Utc>,
    Option<DateTime<Utc>>,
);

/// The session whose id hashes to `hash`; one statement on the primary key.
pub async fn find(conn: &mut AsyncPgConnection, hash: &[u8]) -> Result<Option<Stored>, Error> {
    let row: Option<Row> = s::table
        .find(hash)
        .select((
            s::tenant_id,
            s::subject,
            s::role,
            s::last_seen_at,
            s::expires_at,
            s::revoked_at,
        ))
        .first(conn)
        .await
        .optional()?;
    Ok(row.map(
        |(tenant, subject, role, last_seen_at, expires_at, revoked_at)| Stored {
            tenant,
            subject,
            role,
            times: SessionTimes {
                last_seen_at,
                expires_at,
                revoked_at,
            },
        },
    ))
}

/// The session was used at `now` (never moved back).
pub async fn touch(
    conn: &mut AsyncPgConnection,
    hash: &[u8],
    now: DateTime<Utc>,
) -> Result<(), Error> {
    diesel::update(s::table.find(hash).filter(s::last_seen_at.lt(now)))
        .set(s::last_seen_at.eq(now))
        .execute(conn)
        .await
        .map(drop)
}

/// Ends the session at `now` (signed out); a session already ended keeps its first end.
pub async fn revoke(
    conn: &mut AsyncPgConnection,
    hash: &[u8],
    now: DateTime<Utc>,
) -> Result<(), Error> {
    diesel::update(s::table.find(hash).filter(s::revoked_at.is_null()))
        .set(s::revoked_at.eq(now))
        .execute(conn)
        .await
        .map(drop)
}

/// Deletes the sessions that ended by `now`: revoked, past their end, or not seen since
/// `idle_before`. How many.
pub async fn prune(
    conn: &mut AsyncPgConnection,
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
    .execute(conn)
    .await
}
