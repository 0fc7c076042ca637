//! The one way to answer patient data (docs/dispatch-access-log.md): [`record`] records
//! that the caller read each incident the view shows, through which route, and only then
//! yields the [`Recorded`] answer. A patient view ([`PatientData`]) is not accepted by the
//! generic answers (`ok`, `IfNoneMatch`), so a handler that forgets to record does not
//! compile.
//!
//! The answer waits for the entries' commit (group commit, docs/dispatch-access-log.md):
//! [`record`] takes the handler's pooled connection and hands it back before it waits, so the
//! reads waiting for one commit do not hold the pool's connections from the reads that will
//! fill the next.
//!
//! A route of one incident named in its path may hand that incident's entry over before it
//! loads the view ([`announce`]), so the entry's commit runs while the view is read; the
//! view is then answered through [`Announced::record`], which records anything else it
//! shows and waits for every entry's commit (docs/dispatch-access-log.md, "Handed over
//! before the read").

use actix_web::HttpResponse;
use common::db::Conn;

use super::Reply;
use super::cache::IfNoneMatch;
use crate::access_log::Pending;
use crate::domain::user::CurrentUser;
use crate::error::Error;
use crate::patient_data::{AccessRoute, PatientData};
use crate::state::AppState;

/// A patient view whose reads are recorded: only [`record`] makes one.
#[must_use = "a recorded read is answered"]
pub struct Recorded<T>(T);

/// Records that `reader` read, through `route`, every incident `view` shows (one entry
/// each, at the service clock's time), then yields the answer. A view that shows no
/// incident (an empty search) records nothing. `conn`, the connection the view was read on,
/// is handed back to the pool first.
pub async fn record<T: PatientData>(
    state: &AppState,
    reader: &CurrentUser,
    route: AccessRoute,
    view: T,
    conn: Conn,
) -> Result<Recorded<T>, Error> {
    // The read's pooled connection goes back before the wait: the reads waiting for one
    // commit never hold the pool from the reads that fill the next (taken here, so no
    // handler can forget it).
    drop(conn);
    let incidents = shown(&view);
    let at = state.clock.now();
    // The writer is called only in this module (clippy.toml): every entry goes through
    // here, and the answer leaves only once they are committed (an error is a 503: nothing
    // is answered).
    #[allow(clippy::disallowed_methods)]
    state
        .access_log
        .record_all(reader.id, &incidents, route.as_str(), at)
        .await?;
    Ok(Recorded(view))
}

/// The incidents `view` shows, each once, in the order shown.
fn shown<T: PatientData>(view: &T) -> Vec<i64> {
    let mut incidents = Vec::new();
    view.incidents(&mut incidents);
    if incidents.len() > 1 {
        // A listing may show an incident twice; one entry each, in the order shown. (A
        // detail, the hot path, shows one and needs no set.)
        let mut seen = std::collections::HashSet::with_capacity(incidents.len());
        incidents.retain(|id| seen.insert(*id));
    }
    incidents
}

/// A read's entry handed to the writer before its view is loaded ([`announce`]); the view
/// is answered only through [`Announced::record`], which waits for that entry's commit.
#[must_use = "the announced read is answered through `Announced::record`"]
pub struct Announced {
    reader: i64,
    route: AccessRoute,
    incident: i64,
    pending: Pending,
}

/// Hands the writer the entry of `reader` reading incident `incident` through `route`
/// before the route loads it, so that the entry's commit overlaps the read instead of
/// following it (docs/dispatch-access-log.md, "Handed over before the read"). The entry is
/// written whatever the read becomes (a failure keeps it), but for an incident that does not
/// exist when its batch is written: the writer leaves that entry out. For the routes of one
/// incident named in the path, once the caller's profile is allowed.
pub fn announce(
    state: &AppState,
    reader: &CurrentUser,
    route: AccessRoute,
    incident: i64,
) -> Result<Announced, Error> {
    let at = state.clock.now();
    #[allow(clippy::disallowed_methods)]
    let pending = state
        .access_log
        .enqueue(reader.id, &[incident], route.as_str(), at)?;
    Ok(Announced {
        reader: reader.id,
        route,
        incident,
        pending,
    })
}

impl Announced {
    /// [`record`] for an announced read: records every incident `view` shows besides the
    /// announced one, waits for all of them to be committed, then yields the answer. `conn`
    /// goes back to the pool first.
    pub async fn record<T: PatientData>(
        self,
        state: &AppState,
        view: T,
        conn: Conn,
    ) -> Result<Recorded<T>, Error> {
        drop(conn);
        let mut incidents = shown(&view);
        let shows_announced = incidents.contains(&self.incident);
        incidents.retain(|&id| id != self.incident);
        let route = self.route.as_str();
        if !incidents.is_empty() {
            let at = state.clock.now();
            #[allow(clippy::disallowed_methods)]
            state
                .access_log
                .record_all(self.reader, &incidents, route, at)
                .await?;
        }
        let missing = self.pending.written().await?;
        if shows_announced && missing.contains(&self.incident) {
            // The incident was created after its entry's batch was written (which left the
            // entry out) and before the read loaded it: recorded now, as a read after it.
            let at = state.clock.now();
            #[allow(clippy::disallowed_methods)]
            state
                .access_log
                .record_all(self.reader, &[self.incident], route, at)
                .await?;
        }
        Ok(Recorded(view))
    }
}

impl<T: PatientData> Recorded<T> {
    /// 200 with the view.
    pub fn ok(self) -> Reply {
        #[allow(clippy::disallowed_methods)]
        let res = HttpResponse::Ok().json(self.0);
        Ok(res)
    }

    /// 200 with `ETag: "<version>"`, the incident's version (see `routes::with_etag`).
    pub fn with_etag(self, version: i32) -> Reply {
        #[allow(clippy::disallowed_methods)]
        let res = super::with_etag(version).json(self.0);
        Ok(res)
    }

    /// As `IfNoneMatch::versioned`: 304 while the client's copy is current (recorded all the
    /// same: the client shows it again).
    pub fn versioned(self, cached: &IfNoneMatch, version: i32) -> Reply {
        cached.versioned(version, &self.0)
    }
}
